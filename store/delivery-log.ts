// The delivery log a business reads: its deliveries with every attempt, by subscription or by event.
import { offsetOf, type Page } from '../domain/pagination.ts';
import type { Delivery } from '../domain/webhooks.ts';
import { iso, type Queryable } from './db.ts';

export async function deliveryLog(db: Queryable, businessId: string, filter: { eventId: string } | { subscriptionId: string }, page: Page) {
  const [column, value] = 'eventId' in filter ? ['event_id', filter.eventId] : ['subscription_id', filter.subscriptionId];
  const [count] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE ${column} = $1 AND business_id = $2`, [value, businessId]);
  const deliveries = await db.query(
    `SELECT * FROM webhook_deliveries WHERE ${column} = $1 AND business_id = $2 ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
    [value, businessId, page.limit, offsetOf(page)],
  );
  const attempts = deliveries.length
    ? await db.query('SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY started_at', [deliveries.map((d) => d.id)])
    : [];
  const items: Delivery[] = deliveries.map((d) => ({
    deliveryId: String(d.id),
    eventId: String(d.event_id),
    subscriptionId: String(d.subscription_id),
    status: String(d.status) as Delivery['status'],
    attempts: attempts
      .filter((a) => a.delivery_id === d.id)
      .map((a) => ({
        attempt: Number(a.attempt),
        at: iso(a.started_at),
        url: String(a.url),
        keyId: (a.key_id as string | null) ?? null,
        httpStatus: a.http_status == null ? null : Number(a.http_status),
        latencyMs: a.latency_ms == null ? null : Number(a.latency_ms),
        error: (a.error as string | null) ?? null,
        succeeded: Boolean(a.succeeded),
      })),
    createdAt: iso(d.created_at),
    deliveredAt: d.delivered_at ? iso(d.delivered_at) : null,
  }));
  return { items, totalItems: Number(count!.n) };
}

export async function eventOfBusiness(db: Queryable, businessId: string, eventId: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM events WHERE id = $1 AND business_id = $2', [eventId, businessId])).length === 1;
}
