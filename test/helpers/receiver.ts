// A webhook receiver on 127.0.0.1 that records every request (raw body and headers) and answers
// as the test says.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { eventually } from './eventually.ts';

export type Received = { body: Buffer; headers: IncomingHttpHeaders; at: number };
export type Behaviour = { status?: number; delayMs?: number; location?: string; retryAfter?: string };

export type Receiver = {
  url: string;
  port: number;
  received: Received[];
  /** How to answer the next requests, in order; the last one repeats. */
  answer(...behaviours: Behaviour[]): void;
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
};

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  let plan: Behaviour[] = [{ status: 200 }];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    received.push({ body: Buffer.concat(chunks), headers: req.headers, at: Date.now() });
    const b = plan.length > 1 ? plan.shift()! : plan[0]!;
    if (b.delayMs) await new Promise((r) => setTimeout(r, b.delayMs));
    res.writeHead(b.status ?? 200, { ...(b.location ? { location: b.location } : {}), ...(b.retryAfter ? { 'retry-after': b.retryAfter } : {}) });
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}/hooks/vouch`,
    port: actual,
    received,
    answer: (...behaviours) => {
      plan = behaviours;
    },
    async waitFor(count, timeoutMs = 30_000) {
      await eventually(`${count} webhooks received`, () => received.length >= count, { timeoutMs, everyMs: 25, state: () => received.length });
      return received;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** A loopback URL nothing listens on (a port bound, then released): every connection to it is refused at once. */
export async function refusingUrl(path = ''): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}${path}`;
}
