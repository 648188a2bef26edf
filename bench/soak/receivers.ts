// The clients' webhook receivers (bench/soak.ts): one loopback server, a path per subscription
// (/hooks/<business>/<n>). Each answers 200 at once and notes, per subscription, every event id it
// got (the `webhook-id` header, which is the eventId), how often and when first; per entity, when its
// first decision event (account_status_change, kyb_status_change) arrived; and any event naming
// another business than the subscription's (a leak between tenants).
import { createServer } from 'node:http';
import { close, listen } from './doors.ts';

export type Receipt = { count: number; first: number };

export type Receivers = {
  url(path: string): string;
  /** path → eventId → receipts */
  byPath: Map<string, Map<string, Receipt>>;
  /** `${entityId} ${eventType}` → first arrival of a decision event about it */
  decisions: Map<string, number>;
  stats: { requests: number; duplicates: number; foreign: number; unreadable: number };
  close(): Promise<void>;
};

const DECISION_TYPES = new Set(['account_status_change', 'kyb_status_change']);

/** `businessOf(path)`: the business id a subscription's path belongs to (its events must name it). */
export async function startReceivers(businessOf: (path: string) => string | undefined): Promise<Receivers> {
  const byPath = new Map<string, Map<string, Receipt>>();
  const decisions = new Map<string, number>();
  const stats = { requests: 0, duplicates: 0, foreign: 0, unreadable: 0 };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const now = Date.now();
    stats.requests++;
    const path = req.url ?? '/';
    let event: { eventType?: string; businessId?: string; data?: { eventId?: string; entityId?: string } };
    try {
      event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof event;
    } catch {
      stats.unreadable++;
      return void res.writeHead(200).end('ok');
    }
    const header = req.headers['webhook-id'];
    const eventId = (typeof header === 'string' && header) || event.data?.eventId || '';
    let seen = byPath.get(path);
    if (!seen) byPath.set(path, (seen = new Map()));
    const r = seen.get(eventId);
    if (r) {
      r.count++;
      stats.duplicates++;
    } else seen.set(eventId, { count: 1, first: now });
    if (event.businessId !== businessOf(path)) stats.foreign++;
    if (event.eventType && DECISION_TYPES.has(event.eventType) && event.data?.entityId) {
      const key = `${event.data.entityId} ${event.eventType}`;
      if (!decisions.has(key)) decisions.set(key, now);
    }
    res.writeHead(200).end('ok');
  });
  const base = await listen(server);
  return { url: (path) => `${base}${path}`, byPath, decisions, stats, close: () => close(server) };
}
