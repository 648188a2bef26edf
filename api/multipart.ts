// Reads a multipart/form-data request as it streams in: each file of one form field goes to a sink
// (a temporary file, or the batch CSV's row reader) while its bytes arrive, and nothing of a file is
// ever held whole in memory. The size limit stops a file as it crosses it; a sender that goes quiet
// for `idleMs` is cut off.
// The form's text fields come with the files (first value of each name, at most 1 KB each).
// The client's mistakes are answered as a problem, never thrown; our own failures (a disk that is
// full, a database that is down while the fields are judged) reject, and become a 500.
import type { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { Context } from 'koa';
import type { Refusal } from '../domain/outcome.ts';
import type { UploadProblem } from '../usecases/uploads.ts';

export type IncomingFile = { stream: Readable; fileName: string | null };
/** Takes one file's stream to its end. */
export type FileSink<T> = (file: IncomingFile) => Promise<{ value: T }>;

export type PartsRead<T> = { ok: true; files: T[]; fields: Record<string, string> } | UploadProblem;

export type PartLimits = { maxBytes: number; maxFiles: number; extra: 'ignore' | 'refuse'; idleMs: number };

/**
 * Looks at the form's text fields as they stand when the first file begins (a form that sends its
 * fields first has them all), before any of its bytes are read: a refusal stops the upload there.
 */
export type FieldsCheck = (fields: Record<string, string>) => Promise<Refusal | null>;

const problem = (p: UploadProblem['problem'], message: string): UploadProblem => ({ ok: false, problem: p, message });

/** Most bytes a request body may have: every file at its limit, and 1 MB for the rest of the form. */
const bodyLimit = (limits: Pick<PartLimits, 'maxBytes' | 'maxFiles'>) => limits.maxBytes * limits.maxFiles + 1024 * 1024;
const tooLarge = (maxBytes: number) =>
  problem(
    'too-large',
    `A file is larger than ${maxBytes / 1024 / 1024} MB, the most one file may be; send a smaller file (split a batch CSV into several files).`,
  );

/** What can be told from the headers alone (checked before the request waits for a slot). */
export function precheckParts(ctx: Context, limits: Pick<PartLimits, 'maxBytes' | 'maxFiles'>): UploadProblem | null {
  if (!/^multipart\/form-data\b/i.test(ctx.get('content-type')))
    return problem('not-multipart', 'The body is not multipart/form-data; send the file as multipart/form-data.');
  if (Number(ctx.get('content-length') || 0) > bodyLimit(limits)) return tooLarge(limits.maxBytes);
  return null;
}

/**
 * The files of form field `field`, each through `sink`: at most `maxFiles` (`extra: 'ignore'`
 * reads the first ones and skips the rest; `'refuse'` answers too-many), each at most `maxBytes`,
 * and the whole body at most their sum and 1 MB (a form whose other parts never end is cut off).
 */
export function readParts<T>(ctx: Context, field: string, limits: PartLimits, sink: FileSink<T>, checkFields?: FieldsCheck): Promise<PartsRead<T>> {
  const { maxBytes, maxFiles } = limits;
  const contentType = ctx.get('content-type');
  const early = precheckParts(ctx, limits);
  if (early) return Promise.resolve(early);
  return new Promise((resolve, reject) => {
    let bb: BusboyInstance;
    try {
      bb = new Busboy({
        headers: { ...ctx.req.headers, 'content-type': contentType },
        limits: { fileSize: maxBytes, files: maxFiles + 1, fields: 20, fieldSize: 1024, parts: maxFiles + 25 },
      });
    } catch (err) {
      resolve(
        problem(
          'malformed',
          `The multipart body cannot be read: ${(err as Error).message}; check the Content-Type boundary and the form's encoding, then send it again`,
        ),
      );
      return;
    }
    const results: Promise<{ value: T }>[] = [];
    const open = new Set<BusboyFileStream>();
    const fields: Record<string, string> = {};
    let seen = 0;
    let settled = false;
    let deferred: UploadProblem | null = null;
    let idle: NodeJS.Timeout | undefined;
    const end = (answer: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      ctx.req.off('data', onData);
      answer();
    };
    const settle = (outcome: PartsRead<T>) => end(() => resolve(outcome));
    // A body of declared length (bounded by the check above) is drained unparsed once we have our
    // answer, so the client reads the answer instead of a connection closed under its last write;
    // a body of unknown length, or a sender that went quiet, gets the answer and a closed connection.
    const bounded = Number(ctx.get('content-length') || 0) > 0;
    /** Stops parsing the request; files in progress end. */
    const stopReading = (drain: boolean) => {
      ctx.req.unpipe(bb);
      for (const s of open) s.destroy();
      if (drain && bounded) {
        ctx.req.resume();
      } else {
        ctx.req.pause();
        ctx.set('Connection', 'close');
      }
    };
    const fail = (p: UploadProblem) => {
      if (settled) return;
      stopReading(p.problem !== 'stalled' && p.problem !== 'malformed');
      settle(p);
    };
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => fail(problem('stalled', `No bytes of the upload arrived for ${limits.idleMs / 1000} s, so it was cut off; send it again.`)),
        limits.idleMs,
      );
    };
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > bodyLimit(limits)) fail(tooLarge(maxBytes));
      else armIdle();
    };
    ctx.req.on('data', onData);
    armIdle();
    // Too many files in a body of declared (and so bounded) length: read it to the end and answer
    // then, so the client gets the 400 instead of a connection closed under its last write.
    const tooMany = () => {
      const p = problem(
        'too-many',
        `The form has more than ${maxFiles} file${maxFiles === 1 ? '' : 's'}; send at most ${maxFiles} per upload and the rest in another.`,
      );
      if (bounded) deferred ??= p;
      else fail(p);
    };
    bb.on('file', (name: string, stream: BusboyFileStream, fileName: string) => {
      if (name !== field || settled) {
        stream.resume();
        return;
      }
      seen++;
      if (seen > maxFiles) {
        stream.resume();
        if (limits.extra === 'refuse') tooMany();
        return;
      }
      open.add(stream);
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      let clientFault: Error | null = null;
      stream.once('error', (err: Error) => (clientFault = err));
      stream.once('close', () => open.delete(stream));
      const first = seen === 1 && checkFields;
      const result = (async () => {
        if (first) {
          stream.pause(); // nothing of the file is read until the fields are judged
          const refusal = await checkFields({ ...fields });
          if (refusal) {
            fail({ ok: false, problem: 'refused', message: refusal.message, refusal });
            return { value: undefined as T };
          }
        }
        if (settled) return { value: undefined as T }; // answered (the client gone, say) while the fields were judged
        return sink({ stream, fileName: fileName || null });
      })();
      results.push(result);
      result.then(
        () => open.delete(stream),
        (err: Error) => {
          // the request's own failures (an ended connection, a broken part) settle it as they happen;
          // whatever else failed is ours
          setImmediate(() => {
            if (settled) return;
            if (clientFault || (ctx.req.destroyed && !ctx.req.complete))
              return fail(problem('malformed', `The upload could not be read: ${(clientFault ?? err).message}; send it again`));
            stopReading(false);
            end(() => reject(err));
          });
        },
      );
    });
    bb.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated) fail(problem('malformed', `The form field "${name}" is longer than 1 KB; shorten it.`));
      else if (!(name in fields)) fields[name] = value;
    });
    bb.on('filesLimit', () => {
      if (limits.extra === 'refuse') tooMany();
    });
    bb.on('error', (err: Error) =>
      fail(
        problem('malformed', `The multipart body cannot be read: ${err.message}; check the Content-Type boundary and the form's encoding, then send it again`),
      ),
    );
    bb.on('finish', () => {
      if (settled) return;
      if (deferred) return fail(deferred);
      if (results.length === 0) return fail(problem('no-file', `No file was sent in the form field "${field}"; attach the file(s) to that field.`));
      Promise.all(results).then(
        (read) => settle({ ok: true, files: read.map((r) => r.value), fields }),
        () => {}, // a sink that failed has answered already
      );
    });
    ctx.req.once('close', () => {
      if (!ctx.req.complete) fail(problem('malformed', 'The client closed the connection before the upload ended.'));
    });
    ctx.req.pipe(bb);
  });
}
