// A receiver is not trusted: whatever it answers — a gzip bomb, gigabytes, a body or headers that
// trickle in, nothing at all — one delivery attempt costs a bounded request, its answer is never
// decompressed or kept, and the connection is closed once it stops being useful. Each receiver
// here is a real HTTP (or raw TCP) server on loopback; the process's memory is watched while 16
// attempts run against it at once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createWebhookSender, type SendResult } from '../../activities/webhook-send.ts';
import { TOLERANCE_SECONDS, verifyStandardWebhook } from '../../receiver/verify-webhook.ts';
import { testKeyRings, testWebhookKeys } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

type Hostile = { url: string; closed: () => number; requests: () => IncomingMessage['headers'][]; close(): Promise<void> };

/** An HTTP receiver answering with `answer`; counts the connections we closed on it. */
async function httpReceiver(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Hostile> {
  const seen: IncomingMessage['headers'][] = [];
  let closed = 0;
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => answer(req, res));
  });
  server.on('connection', (socket: Socket) => socket.on('close', () => closed++));
  return listening(
    server,
    'http',
    () => closed,
    () => seen,
  );
}

async function listening(
  server: Server | ReturnType<typeof createServer>,
  scheme: string,
  closed: () => number,
  requests: () => IncomingMessage['headers'][],
): Promise<Hostile> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${scheme}://127.0.0.1:${port}/hook`,
    closed,
    requests,
    close: () =>
      new Promise<void>((r) => {
        (server as ReturnType<typeof createServer>).closeAllConnections?.();
        server.close(() => r());
      }),
  };
}

const send = createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true });
const body = JSON.stringify({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: randomUUID() } });

/** 16 attempts at once against the receiver; the process's peak RSS growth (MB) while they run. */
async function attack(url: string): Promise<{ results: SendResult[]; growthMb: number }> {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  try {
    const results = await Promise.all(Array.from({ length: 16 }, () => send({ eventId: randomUUID(), body, url })));
    return { results, growthMb: (peak - before) / 1024 / 1024 };
  } finally {
    clearInterval(sampler);
  }
}

describe('a hostile webhook receiver', () => {
  const receivers: Hostile[] = [];
  after(async () => {
    for (const r of receivers) await r.close();
  });
  const track = (r: Hostile) => (receivers.push(r), r);

  it('answering a gzip bomb (400 KB that inflate to 400 MB): the status counts, nothing is inflated', async () => {
    const bomb = gzipSync(Buffer.alloc(400 * 1024 * 1024), { level: 9 });
    const r = track(
      await httpReceiver((_req, res) =>
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain', 'content-length': bomb.length }).end(bomb),
      ),
    );
    const { results, growthMb } = await attack(r.url);
    for (const res of results) assert.deepEqual([res.httpStatus, res.error], [200, null]);
    assert.ok(growthMb < 100, `the process grew ${growthMb.toFixed(0)} MB while 16 bombs were answered (inflating them took about a gigabyte)`);
  });

  it('answering gigabytes: the attempt reads a few KB, hangs up, and is delivered', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const r = track(
      await httpReceiver((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      }),
    );
    const { results, growthMb } = await attack(r.url);
    for (const res of results) assert.deepEqual([res.httpStatus, res.error], [200, null]);
    await waitUntil(() => r.closed() >= 16, 'we closed every endless answer');
    assert.ok(growthMb < 100, `the process grew ${growthMb.toFixed(0)} MB`);
  });

  it('trickling its body a byte at a time: delivered on the status, and the connection closed', async () => {
    const r = track(
      await httpReceiver((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('.')), 100);
        res.on('close', () => clearInterval(timer));
      }),
    );
    const { results } = await attack(r.url);
    for (const res of results) assert.deepEqual([res.httpStatus, res.error], [200, null]);
    await waitUntil(() => r.closed() >= 16, 'we closed every trickling answer');
  });

  it('trickling its status line: not an answer, so the attempt fails after its 5 s and hangs up', async () => {
    let closed = 0;
    const server = createTcpServer((socket) => {
      socket.on('close', () => closed++);
      socket.on('error', () => {});
      const line = 'HTTP/1.1 200 OK\r\n';
      let i = 0;
      const timer = setInterval(() => (i < line.length && !socket.destroyed ? socket.write(line[i++]!) : clearInterval(timer)), 400);
      socket.on('close', () => clearInterval(timer));
    });
    const r = track(
      await listening(
        server,
        'http',
        () => closed,
        () => [],
      ),
    );
    const { results } = await attack(r.url);
    for (const res of results) {
      assert.equal(res.httpStatus, null);
      assert.equal(res.error, 'no answer within 5 s');
    }
    await waitUntil(() => closed >= 16, 'we closed every trickling connection');
  });

  it('never answering: fails after 5 s with a reason that names no address', async () => {
    const sockets: Socket[] = [];
    let closed = 0;
    const server = createTcpServer((socket) => {
      sockets.push(socket);
      socket.resume(); // reads the request (and so sees our side close), answers nothing
      socket.on('close', () => closed++);
      socket.on('error', () => {});
    });
    const r = track(
      await listening(
        server,
        'http',
        () => closed,
        () => [],
      ),
    );
    const [res] = (await attack(r.url)).results;
    assert.deepEqual([res!.httpStatus, res!.error], [null, 'no answer within 5 s']);
    await waitUntil(() => closed >= 16, 'we closed every silent connection');
  });

  it('a refused connection is logged for the client by its code, without the address dialled', async () => {
    const r = await httpReceiver((_req, res) => res.end());
    await r.close(); // nothing listens there now
    const res = await send({ eventId: randomUUID(), body, url: r.url });
    assert.equal(res.error, 'connection refused (ECONNREFUSED)');
    assert.doesNotMatch(res.error!, /127\.0\.0\.1|:\d{2,5}/);
    assert.match(res.detail!, /ECONNREFUSED/, 'the raw cause is kept for our own logs');
  });

  /**
   * A receiver over raw TCP that answers 200 (keeping the connection alive) to the first `answered`
   * requests of each connection and resets the connection, unread, at the next — as a server does
   * that closes an idle kept-alive connection just as we send on it. Counts connections and requests.
   */
  async function resettingReceiver(answered: number) {
    let connections = 0;
    let requests = 0;
    const server = createTcpServer((socket) => {
      connections++;
      let onThis = 0;
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        for (;;) {
          const end = buffered.indexOf('\r\n\r\n');
          if (end < 0) return;
          const length = Number(/content-length: *(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
          if (buffered.length < end + 4 + length) return;
          buffered = buffered.slice(end + 4 + length);
          requests++;
          if (onThis++ < answered) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: keep-alive\r\n\r\n');
          else return void socket.resetAndDestroy();
        }
      });
    });
    const hostile = track(
      await listening(
        server,
        'http',
        () => 0,
        () => [],
      ),
    );
    return { url: hostile.url, connections: () => connections, requests: () => requests };
  }

  it('a kept-alive connection reset as we reuse it: sent once more at once, on a new connection, and delivered', async () => {
    const r = await resettingReceiver(1);
    const sender = createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true }); // a pool of its own
    const first = await sender({ eventId: randomUUID(), body, url: r.url });
    assert.deepEqual([first.httpStatus, first.error], [200, null]);
    const second = await sender({ eventId: randomUUID(), body, url: r.url });
    assert.deepEqual([second.httpStatus, second.error], [200, null], 'the reset of the reused connection is not the answer');
    assert.deepEqual([r.connections(), r.requests()], [2, 3], 'the second sent twice: on the kept connection, then on a new one');
  });

  it('a reset on a new connection is the answer: one attempt, failed, not sent again', async () => {
    const r = await resettingReceiver(0);
    const res = await createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true })({ eventId: randomUUID(), body, url: r.url });
    assert.equal(res.error, 'connection reset by the receiver (ECONNRESET)');
    assert.deepEqual([r.connections(), r.requests()], [1, 1]);
  });

  it('signs every attempt twice: vouch-signature, and webhook-signature (Standard Webhooks v1a) over id.timestamp.body', async () => {
    const r = track(await httpReceiver((_req, res) => res.writeHead(200).end('ok')));
    const eventId = randomUUID();
    const res = await send({ eventId, body, url: r.url });
    assert.equal(res.error, null);
    const headers = r.requests().at(-1)!;
    assert.equal(headers['webhook-id'], eventId);
    assert.match(String(headers['webhook-signature']), /^v1a,[A-Za-z0-9+/]+={0,2}$/);
    const keys = testKeyRings().standardWebhooks;
    assert.deepEqual(verifyStandardWebhook(body, headers, keys), { ok: true });
    assert.deepEqual(verifyStandardWebhook(body.replace('card', 'Card'), headers, keys), { ok: false, reason: 'no valid signature' });
    // a captured delivery replayed with a fresh timestamp: the signature no longer holds
    const replayed = { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) + 60) };
    assert.deepEqual(verifyStandardWebhook(body, replayed, keys), { ok: false, reason: 'no valid signature' });
    // within the standard's five minutes it holds; past them it is refused for its age
    const sentAt = Number(headers['webhook-timestamp']) * 1000;
    assert.deepEqual(verifyStandardWebhook(body, headers, keys, { now: new Date(sentAt + (TOLERANCE_SECONDS - 1) * 1000) }), { ok: true });
    assert.equal(verifyStandardWebhook(body, headers, keys, { now: new Date(sentAt + (TOLERANCE_SECONDS + 1) * 1000) }).ok, false);
    // replayed as captured, an hour later: refused for its age
    assert.deepEqual(verifyStandardWebhook(body, headers, keys, { now: new Date(Date.now() + 3_600_000) }), {
      ok: false,
      reason: 'timestamp outside tolerance',
    });

    // checked over the bytes as received: a byte that is not UTF-8 is not taken for the character
    // a decoder would put in its place
    const replacement = body.replace('card', 'card \uFFFD');
    const signed = await send({ eventId: randomUUID(), body: replacement, url: r.url });
    assert.equal(signed.error, null);
    const sent = r.requests().at(-1)!;
    const bytes = Buffer.from(replacement, 'utf8');
    assert.deepEqual(verifyStandardWebhook(bytes, sent, keys), { ok: true });
    const at = bytes.indexOf(Buffer.from('\uFFFD', 'utf8'));
    const forged = Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + 3)]);
    assert.deepEqual(verifyStandardWebhook(forged, sent, keys), { ok: false, reason: 'no valid signature' });
  });
});

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 15_000) {
  await eventually(what, condition, { timeoutMs, everyMs: 25 });
}
