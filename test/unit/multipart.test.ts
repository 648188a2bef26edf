// Reading a multipart upload (api/multipart.ts) as a small Koa app over real HTTP: the client's
// mistakes are a problem the route answers with 400, our own failures (a full disk while a file is
// written, a database down while the form's fields are judged) reject and become a 500 whose text
// the client never sees, a client that leaves while its fields are judged has nothing of its file
// read or stored, and a form whose other parts never end is cut off at the body's limit.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Koa from 'koa';
import { refuse } from '../../domain/outcome.ts';
import { readParts, type FieldsCheck, type FileSink, type PartLimits } from '../../api/multipart.ts';

type Route = { sink: FileSink<number>; check?: FieldsCheck; limits?: Partial<PartLimits> };

const LIMITS: PartLimits = { maxBytes: 64 * 1024, maxFiles: 1, extra: 'ignore', idleMs: 5_000 };
/** Counts a file's bytes. */
const counting: FileSink<number> = async ({ stream }) => {
  let n = 0;
  for await (const chunk of stream) n += (chunk as Buffer).length;
  return { value: n };
};

describe('reading a multipart upload', () => {
  let server: Server;
  let url: string;
  let route: Route;

  before(async () => {
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx) => {
      const read = await readParts(ctx, 'file', { ...LIMITS, ...route.limits }, route.sink, route.check);
      ctx.status = read.ok ? 200 : 400;
      ctx.body = read.ok ? { files: read.files } : { problem: read.problem, message: read.message };
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => server.close());

  const boundary = `----t-${randomUUID()}`;
  const fieldPart = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const filePart = (name: string, bytes: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${bytes}\r\n`;
  const closing = `--${boundary}--\r\n`;

  /** Posts `body` (or, with `endless`, that start then filler until answered, up to 50 MB); the answer, and the bytes that went out. */
  const post = (body: string, options: { endless?: boolean; abortAfterMs?: number } = {}) =>
    new Promise<{ status: number; body: string; sent: number; aborted?: boolean }>((resolve) => {
      let sent = 0;
      let answered = false;
      const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
      // a client that leaves mid-upload declared more than it sent
      if (!options.endless) headers['content-length'] = String(Buffer.byteLength(body) + (options.abortAfterMs === undefined ? 0 : 100_000));
      const req = request(url, { method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          answered = true;
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), sent });
        });
      });
      req.on('error', () => {
        if (!answered) resolve({ status: 0, body: '', sent, aborted: true });
      });
      req.write(body);
      sent += Buffer.byteLength(body);
      if (options.abortAfterMs !== undefined) setTimeout(() => req.destroy(), options.abortAfterMs);
      if (!options.endless) {
        if (options.abortAfterMs === undefined) req.end();
        return;
      }
      const filler = Buffer.alloc(16 * 1024, 0x61);
      const pump = async () => {
        while (!answered && !req.destroyed && sent < 50 * 1024 * 1024) {
          if (!req.write(filler)) await once(req, 'drain');
          sent += filler.length;
        }
        if (!answered && !req.destroyed) req.end();
      };
      pump().catch(() => {}); // the server may close the connection under a write
    });

  it('reads a file through the sink (the passing case)', async () => {
    route = { sink: counting };
    const r = await post(filePart('file', 'x'.repeat(1000)) + closing);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body), { files: [1000] });
  });

  it('a sink that fails on our side (a full disk) is a 500, its message kept from the client', async () => {
    route = {
      sink: async ({ stream }) => {
        stream.resume();
        throw Object.assign(new Error("ENOSPC: no space left on device, write '/var/lib/vouch/tmp/secret-path.part'"), { code: 'ENOSPC' });
      },
    };
    const r = await post(filePart('file', 'x'.repeat(1000)) + closing);
    assert.equal(r.status, 500, r.body);
    assert.doesNotMatch(r.body, /ENOSPC|secret-path/);
  });

  it('a check of the fields that fails on our side (the database down) is a 500', async () => {
    route = { sink: counting, check: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) };
    const r = await post(fieldPart('entityId', 'e-1') + filePart('file', 'x'.repeat(1000)) + closing);
    assert.equal(r.status, 500, r.body);
    assert.doesNotMatch(r.body, /ECONNREFUSED/);
  });

  it("a check of the fields that refuses them is the client's problem (400), and nothing of the file is read", async () => {
    let sinkCalls = 0;
    route = {
      sink: (f) => (sinkCalls++, counting(f)),
      check: async (fields) => (fields.entityId === 'theirs' ? refuse('entityNotFound', 'Entity not found.', { parameter: 'entityId' }) : null),
    };
    const r = await post(fieldPart('entityId', 'theirs') + filePart('file', 'x'.repeat(1000)) + closing);
    assert.equal(r.status, 400, r.body);
    assert.equal(JSON.parse(r.body).problem, 'refused');
    assert.equal(sinkCalls, 0);
  });

  it('a client that leaves while its fields are judged has nothing of its file taken', async () => {
    let sinkCalls = 0;
    let judged!: () => void;
    const done = new Promise<void>((r) => (judged = r));
    route = {
      sink: (f) => (sinkCalls++, counting(f)),
      check: async () => {
        await new Promise((r) => setTimeout(r, 300)); // the client leaves at 50 ms
        judged();
        return null;
      },
    };
    const r = await post(fieldPart('entityId', 'e-1') + filePart('file', 'x'.repeat(1000)), { abortAfterMs: 50 });
    assert.ok(r.aborted);
    await done;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sinkCalls, 0, 'the sink (a temporary file) was never started for a request already answered');
  });

  it("a form whose other parts never end is cut off at the body's limit (the files' sum and 1 MB)", async () => {
    route = { sink: counting };
    const r = await post(`--${boundary}\r\nContent-Disposition: form-data; name="other"; filename="x.bin"\r\n\r\n`, { endless: true });
    assert.equal(r.status, 400, `${r.status} ${r.body}`);
    assert.equal(JSON.parse(r.body).problem, 'too-large');
    // the body's limit is 1.06 MB here; what went out beyond it sat in the sockets' buffers
    assert.ok(r.sent < 16 * 1024 * 1024, `${(r.sent / 1024 / 1024).toFixed(1)} MB went out before the answer`);
  });
});
