// Receiving uploads without letting one business cost the others: each upload takes a slot (at most
// `uploadsPerProcess` at once in this process, `uploadsPerBusiness` of them for one business; a
// request beyond them waits, its body unread, up to `slotWaitMs` in arrival order — a waiter whose
// business has room is never held up by another business's queue — then 429 for the business's own
// limit or 503 for the process's), and its files stream to temporary files on disk (mode 600, in a
// directory only this service reads), hashed on the way, their first bytes kept to tell their
// type. The slot and the temporary files are released when the response has been sent, whatever
// the use case did with them.
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { readBatchCsv } from '../domain/batch-csv.ts';
import { readRequirementLines } from '../domain/requirement-lines.ts';
import type { Config } from '../runtime/config.ts';
import type { CsvRead } from '../usecases/batch-imports.ts';
import type { LinesRead } from '../usecases/requirement-batches.ts';
import type { FilesRead, ReceivedFile, UploadProblem } from '../usecases/uploads.ts';
import { precheckParts, readParts, type FieldsCheck, type FileSink, type PartLimits } from './multipart.ts';

/** Bytes kept from the start of each file: enough for file-type to tell PDF, JPEG, PNG and HEIC. */
const HEAD_BYTES = 4100;
/** Temporary files older than this are a crashed process's leftovers. */
const STALE_MS = 3_600_000;
/**
 * Requests of one business that may wait for a slot (beyond them: 429 at once). A waiting request
 * costs a socket and a few KB: its body stays unread in the kernel's buffers until its turn.
 */
const WAITING_PER_BUSINESS = 64;

type Waiter = { businessId: string; grant(): void; timer: NodeJS.Timeout };

/** Upload slots of one process: a bounded number at once, in all and per business, granted in arrival order. */
export class UploadSlots {
  private inUse = 0;
  private readonly byBusiness = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  private readonly limits: { perProcess: number; perBusiness: number; maxWaitMs: number };

  constructor(limits: { perProcess: number; perBusiness: number; maxWaitMs: number }) {
    this.limits = limits;
  }

  private fits(businessId: string): boolean {
    return this.inUse < this.limits.perProcess && (this.byBusiness.get(businessId) ?? 0) < this.limits.perBusiness;
  }

  private take(businessId: string): () => void {
    this.inUse++;
    this.byBusiness.set(businessId, (this.byBusiness.get(businessId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      const n = this.byBusiness.get(businessId)! - 1;
      if (n === 0) this.byBusiness.delete(businessId);
      else this.byBusiness.set(businessId, n);
      this.grantWaiting();
    };
  }

  /** Waiters whose business has room go first, in arrival order; one business's queue never holds up another's. */
  private grantWaiting(): void {
    for (let i = 0; i < this.waiting.length && this.inUse < this.limits.perProcess;) {
      const w = this.waiting[i]!;
      if (this.fits(w.businessId))
        w.grant(); // leaves the queue
      else i++;
    }
  }

  /**
   * A slot (its release function), or whose limit kept the request out after waiting. A waiter whose
   * `signal` aborts (its client went away) leaves the queue; a slot granted once it has gone is
   * handed on at once.
   */
  acquire(businessId: string, signal?: AbortSignal): Promise<{ ok: true; release(): void } | { ok: false; scope: 'business' | 'process' | 'gone' }> {
    if (signal?.aborted) return Promise.resolve({ ok: false, scope: 'gone' });
    if (this.fits(businessId) && this.waiting.length === 0) return Promise.resolve({ ok: true, release: this.take(businessId) });
    const queued = this.waiting.filter((w) => w.businessId === businessId).length;
    if (queued >= WAITING_PER_BUSINESS || this.limits.maxWaitMs === 0) return Promise.resolve({ ok: false, scope: this.scopeOf(businessId) });
    return new Promise((resolve) => {
      const leave = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        leave();
        resolve({ ok: false, scope: 'gone' });
      };
      const waiter: Waiter = {
        businessId,
        grant: () => {
          leave();
          resolve({ ok: true, release: this.take(businessId) });
        },
        timer: setTimeout(() => {
          leave();
          resolve({ ok: false, scope: this.scopeOf(businessId) });
        }, this.limits.maxWaitMs),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
      this.grantWaiting();
    });
  }

  private scopeOf(businessId: string): 'business' | 'process' {
    return (this.byBusiness.get(businessId) ?? 0) >= this.limits.perBusiness ? 'business' : 'process';
  }

  /** For metrics and tests: slots in use, and requests waiting. */
  get load() {
    return { inUse: this.inUse, waiting: this.waiting.length };
  }
}

/** Each file of the request to a temporary file of its own, all removed when the response ends. */
function temporaryFileSink(ctx: Context, dir: string): FileSink<ReceivedFile> {
  const files: string[] = [];
  ctx.res.once('close', () => {
    for (const file of files) void rm(file, { force: true });
  });
  return async ({ stream, fileName }) => {
    const file = path.join(dir, `${randomUUID()}.part`);
    files.push(file);
    const hash = createHash('sha256');
    const head: Buffer[] = [];
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, next) {
        hash.update(chunk);
        if (size < HEAD_BYTES) head.push(chunk.subarray(0, HEAD_BYTES - size));
        size += chunk.length;
        next(null, chunk);
      },
    });
    try {
      await pipeline(stream, tap, createWriteStream(file, { mode: 0o600 }));
    } finally {
      // the response may have ended (the client gone) while this file was still being written
      if (ctx.res.closed) await rm(file, { force: true });
    }
    return { value: { path: file, size, sha256: hash.digest('hex'), head: Buffer.concat(head), fileName } };
  };
}

/**
 * A batch file, read by its rules as it arrives (the CSV row by row, the JSON Lines line by line) and
 * hashed. Once the rules refuse it (its 5,001st record, say), the rest is only counted, not parsed,
 * to its end: a file over 10 MB is refused as too large whatever else is wrong with it, as the
 * interface's order of rules has it.
 */
function readingSink<T extends { ok: boolean }>(
  read: (chunks: AsyncIterable<Buffer>) => Promise<T>,
): FileSink<{ read: T; sha256: string; fileName: string | null }> {
  return async ({ stream, fileName }) => {
    const hash = createHash('sha256');
    const chunks = stream[Symbol.asyncIterator]();
    const hashed: AsyncIterable<Buffer> = {
      [Symbol.asyncIterator]: () => ({
        async next() {
          const n = await chunks.next();
          if (!n.done) hash.update(n.value as Buffer);
          return n;
        },
        // the reader stopping early must not end the request's stream: the rest is drained below
        return: async () => ({ done: true, value: undefined }),
      }),
    };
    const result = await read(hashed);
    if (!result.ok) for (let n = await chunks.next(); !n.done; n = await chunks.next());
    return { value: { read: result, sha256: hash.digest('hex'), fileName } };
  };
}

export type Uploads = {
  /** The files of form field `field`, as temporary files; the slot is taken first. */
  files(
    ctx: Context,
    businessId: string,
    field: string,
    limits: Pick<PartLimits, 'maxBytes' | 'maxFiles' | 'extra'>,
    checkFields?: FieldsCheck,
  ): Promise<FilesRead>;
  /** The batch upload's CSV, checked by its rules as it streams in. */
  batchCsv(ctx: Context, businessId: string, options: { maxBytes: number; binSponsored: boolean }): Promise<CsvRead>;
  /** A requirement batch's JSON Lines, checked line by line as it streams in. */
  requirementLines(ctx: Context, businessId: string, options: { maxBytes: number }): Promise<LinesRead>;
  slots: UploadSlots;
};

export function createUploads(config: Config, log: Logger): Uploads {
  const f = config.files;
  const slots = new UploadSlots({ perProcess: f.uploadsPerProcess, perBusiness: f.uploadsPerBusiness, maxWaitMs: f.slotWaitMs });
  const dir = f.uploadTmpDir;
  let swept = false;
  /** The temporary directory, made again if something removed it; leftovers of a crash swept once. */
  const prepared = async () => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (swept) return;
    swept = true;
    void sweepStale(dir).catch((err: unknown) => log.warn({ err }, 'could not sweep old temporary uploads'));
  };

  /**
   * Takes a slot for the request, released when its response ends; or the problem that kept it out.
   * A request whose client leaves while it waits gives up its place in the queue.
   */
  const slotFor = async (ctx: Context, businessId: string): Promise<UploadProblem | null> => {
    const gone = new AbortController();
    const onClose = () => gone.abort();
    ctx.res.once('close', onClose);
    const slot = await slots.acquire(businessId, gone.signal);
    ctx.res.off('close', onClose);
    if (slot.ok) {
      if (ctx.res.closed) slot.release();
      else ctx.res.once('close', slot.release);
      return null;
    }
    if (slot.scope === 'gone') return { ok: false, problem: 'malformed', message: 'The client closed the connection before the upload began.' };
    const retryAfterSeconds = Math.max(1, Math.ceil(f.slotWaitMs / 1000));
    return {
      ok: false,
      problem: 'busy',
      busy: { scope: slot.scope, retryAfterSeconds },
      message:
        slot.scope === 'business'
          ? `Your business has ${f.uploadsPerBusiness} uploads in progress at once already; retry in ${retryAfterSeconds} s.`
          : `This API process is receiving as many uploads as it takes at once; retry in ${retryAfterSeconds} s.`,
    };
  };
  const limits = { idleMs: f.idleTimeoutMs };

  return {
    slots,
    async files(ctx, businessId, field, l, checkFields) {
      const early = precheckParts(ctx, l);
      if (early) return early;
      const busy = await slotFor(ctx, businessId);
      if (busy) return busy;
      await prepared();
      const read = await readParts(ctx, field, { ...l, ...limits }, temporaryFileSink(ctx, dir), checkFields);
      return read.ok ? { ok: true, files: read.files, fields: read.fields } : read;
    },
    async batchCsv(ctx, businessId, options) {
      const early = precheckParts(ctx, { maxBytes: options.maxBytes, maxFiles: 1 });
      if (early) return early;
      const busy = await slotFor(ctx, businessId);
      if (busy) return busy;
      const sink = readingSink((chunks) => readBatchCsv(chunks, options));
      const read = await readParts(ctx, 'file', { maxBytes: options.maxBytes, maxFiles: 1, extra: 'ignore', ...limits }, sink);
      if (!read.ok) return read; // never too-many: files beyond the first are ignored
      const { read: csv, sha256, fileName } = read.files[0]!;
      return { ok: true, file: { csv, sha256, fileName } };
    },
    async requirementLines(ctx, businessId, options) {
      const early = precheckParts(ctx, { maxBytes: options.maxBytes, maxFiles: 1 });
      if (early) return early;
      const busy = await slotFor(ctx, businessId);
      if (busy) return busy;
      const sink = readingSink((chunks) => readRequirementLines(chunks));
      const read = await readParts(ctx, 'file', { maxBytes: options.maxBytes, maxFiles: 1, extra: 'ignore', ...limits }, sink);
      if (!read.ok) return read;
      const { read: lines, sha256, fileName } = read.files[0]!;
      return { ok: true, file: { lines, sha256, fileName } };
    },
  };
}

/** Removes temporary uploads left by a process that died while receiving them. */
async function sweepStale(dir: string): Promise<void> {
  const cutoff = Date.now() - STALE_MS;
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.part')) continue;
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => null);
    if (info && info.mtimeMs < cutoff) await rm(file, { force: true });
  }
}
