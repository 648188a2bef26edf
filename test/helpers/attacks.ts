// What a tenant with an ordinary API key can throw at the API (issue 18), and a watcher that measures
// what it costs everyone else meanwhile: GET /health and another business's reads, every 50 ms, and
// the API process's resident memory. Used by test/e2e/tenant-dos.test.ts and bench/adversarial.ts.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';

export const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : 0);

/** A CSV with the header and `lines` one-column records of `value` (2 bytes each for "a"). */
export function manyLineCsv(lines: number, value = 'a'): Buffer {
  const header = Buffer.from('externalId,shareToken\n');
  const line = Buffer.from(`${value}\n`);
  const out = Buffer.alloc(header.length + line.length * lines);
  header.copy(out, 0);
  for (let i = 0, at = header.length; i < lines; i++, at += line.length) line.copy(out, at);
  return out;
}

export type Part = { field: string; fileName?: string; size?: number; body?: Buffer; value?: string; head?: Buffer };

export type Sent = { status: number; body: string; ms: number; error?: string };

/**
 * Sends a multipart/form-data POST with a declared length, streaming each file's bytes (a `size`
 * of filler after its `head`, never all in memory) at up to `bytesPerSecond` (unlimited by default);
 * `stallAfter` bytes in, it stops sending and waits for the answer; `leaveAfterMs` after it began,
 * it closes the connection (a client that gives up).
 */
export function sendMultipart(
  url: string,
  headers: Record<string, string>,
  parts: Part[],
  options: { bytesPerSecond?: number; stallAfter?: number; chunk?: number; leaveAfterMs?: number } = {},
): Promise<Sent> {
  const boundary = `----vouch-attack-${randomUUID()}`;
  const pieces: (Buffer | { filler: number })[] = [];
  for (const p of parts) {
    const disposition = p.fileName !== undefined ? `form-data; name="${p.field}"; filename="${p.fileName}"` : `form-data; name="${p.field}"`;
    pieces.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.fileName !== undefined ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`,
      ),
    );
    if (p.value !== undefined) pieces.push(Buffer.from(p.value));
    if (p.body) pieces.push(p.body);
    if (p.head) pieces.push(p.head);
    if (p.size) pieces.push({ filler: p.size - (p.head?.length ?? 0) });
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  const length = pieces.reduce((n, p) => n + (Buffer.isBuffer(p) ? p.length : p.filler), 0);
  const started = performance.now();
  return new Promise((resolve) => {
    let answered = false;
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          answered = true;
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: performance.now() - started });
        });
      },
    );
    req.on('error', (err) => {
      if (!answered) resolve({ status: 0, body: '', ms: performance.now() - started, error: (err as NodeJS.ErrnoException).code ?? err.message });
    });
    if (options.leaveAfterMs !== undefined) setTimeout(() => req.destroy(), options.leaveAfterMs);
    const size = options.chunk ?? 64 * 1024;
    const filler = Buffer.alloc(size, 0x61);
    let sent = 0;
    const pace = async () => {
      for (const p of pieces) {
        let left = Buffer.isBuffer(p) ? p.length : p.filler;
        let offset = 0;
        while (left > 0) {
          if (answered || req.destroyed) return;
          if (options.stallAfter !== undefined && sent >= options.stallAfter) return; // goes quiet
          const n = Math.min(left, size);
          const bytes = Buffer.isBuffer(p) ? p.subarray(offset, offset + n) : filler.subarray(0, n);
          if (!req.write(bytes)) await new Promise((r) => req.once('drain', r));
          sent += n;
          left -= n;
          offset += n;
          if (options.bytesPerSecond) await new Promise((r) => setTimeout(r, (n / options.bytesPerSecond!) * 1000));
        }
      }
      req.end();
    };
    void pace();
  });
}

/** The process's resident set size in MB (Linux). */
export function rssMb(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  return m ? Number(m[1]) / 1024 : 0;
}

export type Watch = { health: number[]; other: number[]; healthFailures: number; peakRssMb: number; baseRssMb: number };

/**
 * Every 50 ms: GET /health, and GET /entity?limit=1 as another business; and the API process's RSS.
 * Stop it to get the latencies (ms) and the peak memory.
 */
export function watch(base: string, pid: number, otherKey: string): { stop(): Promise<Watch> } {
  const w: Watch = { health: [], other: [], healthFailures: 0, peakRssMb: rssMb(pid), baseRssMb: rssMb(pid) };
  let running = true;
  const timed = async (path: string, headers: Record<string, string>, into: number[]) => {
    const t = performance.now();
    const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(30_000) }).catch(() => null);
    await res?.arrayBuffer();
    into.push(performance.now() - t);
    return res?.status ?? 0;
  };
  const loops = [
    (async () => {
      while (running) {
        if ((await timed('/health', {}, w.health)) !== 200) w.healthFailures++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })(),
    (async () => {
      while (running) {
        await timed('/entity?limit=1', { 'x-vouch-api-key': otherKey, 'Accept-Version': 'v1.0' }, w.other);
        await new Promise((r) => setTimeout(r, 50));
      }
    })(),
    (async () => {
      while (running) {
        w.peakRssMb = Math.max(w.peakRssMb, rssMb(pid));
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
  ];
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return w;
    },
  };
}
