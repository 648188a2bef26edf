// The client's webhook endpoint, from the interface document alone (sections 5.4, 6.3): verifies
// `<svc>-signature` (Base64 RSA-SHA512, PKCS#1 v1.5, over the raw body) with the public keys it is
// given, refuses a delivery without a valid signature, answers 200 at once (acknowledge before
// processing) and handles each `data.eventId` once per endpoint path, however often it arrives.
// Only node:http and the client's own verification.
import { createServer, type Server } from 'node:http';
import { eventProblems, verifySignature, type WebhookEvent } from './client.ts';

export type Accepted = { path: string; event: WebhookEvent; raw: Buffer; signature: string; receivedAt: number };

export type SpecReceiver = {
  /** Base URL: subscribe `${url}/<anything>`; each path is its own endpoint for deduplication. */
  url: string;
  /** Verified events, first delivery of each `data.eventId` per path. */
  accepted: Accepted[];
  /** Verified redeliveries of an eventId already handled on that path (not processed again). */
  duplicates: Accepted[];
  /** Deliveries refused: missing or invalid signature, or a body that is not JSON. */
  refused: { path: string; reason: string; raw: Buffer }[];
  /** Events that verified but are not shaped like section 2.10. */
  malformed: { path: string; problems: string[]; raw: Buffer }[];
  /** Accepted events at a path (all paths when omitted). */
  events(path?: string): WebhookEvent[];
  /** Polls until `pick` holds over the accepted events, or throws at the deadline. */
  until(what: string, pick: (events: Accepted[]) => boolean, timeoutMs?: number): Promise<Accepted[]>;
  close(): Promise<void>;
};

export async function startSpecReceiver(options: { svc: string; publicKeysPem: readonly string[] }): Promise<SpecReceiver> {
  const header = `${options.svc}-signature`;
  const accepted: Accepted[] = [];
  const duplicates: Accepted[] = [];
  const refused: SpecReceiver['refused'] = [];
  const malformed: SpecReceiver['malformed'] = [];
  const seen = new Set<string>();

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const path = new URL(req.url ?? '/', 'http://receiver').pathname;
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    if (!verifySignature(raw, req.headers[header], options.publicKeysPem)) {
      refused.push({ path, reason: req.headers[header] ? 'invalid signature' : 'missing signature', raw });
      res.writeHead(401).end();
      return;
    }
    let event: WebhookEvent;
    try {
      event = JSON.parse(raw.toString('utf8')) as WebhookEvent;
    } catch {
      refused.push({ path, reason: 'body is not JSON', raw });
      res.writeHead(400).end();
      return;
    }
    // acknowledge first (6.3: 200 within 5 seconds, body ignored), then process
    res.writeHead(200).end();
    const problems = eventProblems(event);
    if (problems.length) malformed.push({ path, problems, raw });
    const sig = req.headers[header];
    const record = { path, event, raw, signature: Array.isArray(sig) ? sig[0]! : sig!, receivedAt: Date.now() };
    const dedupKey = `${path}\n${event?.data?.eventId}`;
    if (seen.has(dedupKey)) duplicates.push(record);
    else {
      seen.add(dedupKey);
      accepted.push(record);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;

  return {
    url: `http://127.0.0.1:${port}`,
    accepted,
    duplicates,
    refused,
    malformed,
    events: (path) => accepted.filter((a) => path === undefined || a.path === path).map((a) => a.event),
    async until(what, pick, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        if (pick(accepted)) return accepted;
        if (Date.now() > end) {
          const got = accepted.map((a) => `${a.path} ${a.event.eventType}/${a.event.eventName} ${a.event.data?.entityId ?? '-'} ${a.event.data?.status ?? ''}`);
          throw new Error(`${what}: not received within ${timeoutMs} ms; accepted: ${JSON.stringify(got)}; refused: ${refused.length}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
