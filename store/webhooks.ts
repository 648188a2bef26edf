// Webhook subscriptions, and deliveries of events to them with every attempt logged.
import { randomUUID } from 'node:crypto';
import { MAX_SUBSCRIPTIONS, type SubscriptionInput } from '../domain/webhooks.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';
import { iso, type Db, type Queryable, type Row } from './db.ts';

export type Subscription = { id: string; channel: 'WEBHOOK'; types: string[]; config: { webhook: { url: string } }; createdAt: string; updatedAt: string };

const toSubscription = (r: Row): Subscription => ({
  id: String(r.id),
  channel: 'WEBHOOK',
  types: r.types as string[],
  config: { webhook: { url: String(r.url) } },
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

export class SubscriptionLimitReached extends Error {}

/** Creates a subscription unless the business already has MAX_SUBSCRIPTIONS (checked under a lock). */
export async function createSubscription(db: Db, businessId: string, input: SubscriptionInput): Promise<Subscription> {
  return db.tx(async (q) => {
    await q.query('SELECT id FROM businesses WHERE id = $1 FOR UPDATE', [businessId]);
    const [count] = await q.query<{ n: string }>('SELECT count(*) AS n FROM notification_subscriptions WHERE business_id = $1', [businessId]);
    if (Number(count!.n) >= MAX_SUBSCRIPTIONS) throw new SubscriptionLimitReached();
    const [r] = await q.query('INSERT INTO notification_subscriptions (id, business_id, channel, types, url) VALUES ($1, $2, $3, $4, $5) RETURNING *', [
      randomUUID(),
      businessId,
      input.notificationChannel,
      input.notificationTypes,
      input.webhookUrl,
    ]);
    return toSubscription(r!);
  });
}

export async function listSubscriptions(db: Db, businessId: string, page: Page) {
  const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM notification_subscriptions WHERE business_id = $1', [businessId]);
  const rows = await db.query('SELECT * FROM notification_subscriptions WHERE business_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3', [businessId, page.limit, offsetOf(page)]);
  return { items: rows.map(toSubscription), totalItems: Number(count!.n) };
}

export async function getSubscription(q: Queryable, businessId: string, id: string): Promise<Subscription | undefined> {
  const [r] = await q.query('SELECT * FROM notification_subscriptions WHERE id = $1 AND business_id = $2', [id, businessId]);
  return r ? toSubscription(r) : undefined;
}

export async function replaceSubscription(db: Db, businessId: string, id: string, input: SubscriptionInput): Promise<Subscription | undefined> {
  const [r] = await db.query(
    'UPDATE notification_subscriptions SET channel = $3, types = $4, url = $5, updated_at = now() WHERE id = $1 AND business_id = $2 RETURNING *',
    [id, businessId, input.notificationChannel, input.notificationTypes, input.webhookUrl],
  );
  return r ? toSubscription(r) : undefined;
}

/** Deletes the subscription and cancels its pending deliveries; returns their workflow ids' parts. */
export async function deleteSubscription(db: Db, businessId: string, id: string): Promise<{ deliveryId: string; run: number }[] | undefined> {
  return db.tx(async (q) => {
    const gone = await q.query('DELETE FROM notification_subscriptions WHERE id = $1 AND business_id = $2 RETURNING id', [id, businessId]);
    if (gone.length === 0) return undefined;
    const pending = await q.query<{ id: string; run: number }>(
      "UPDATE webhook_deliveries SET status = 'canceled', updated_at = now() WHERE subscription_id = $1 AND status = 'pending' RETURNING id, run",
      [id],
    );
    return pending.map((p) => ({ deliveryId: p.id, run: Number(p.run) }));
  });
}

// ---- deliveries ----------------------------------------------------------------------------------

/** Creates the deliveries of an event to its business's matching subscriptions (once) and marks it dispatched. */
export async function dispatchEvent(db: Db, eventId: string): Promise<{ deliveryId: string; run: number; status: string }[]> {
  return db.tx(async (q) => {
    const [event] = await q.query<{ business_id: string; event_type: string }>('SELECT business_id, event_type FROM events WHERE id = $1', [eventId]);
    if (!event) return [];
    await q.query(
      `INSERT INTO webhook_deliveries (id, event_id, subscription_id, business_id)
       SELECT gen_random_uuid(), $1, s.id, s.business_id FROM notification_subscriptions s
        WHERE s.business_id = $2 AND $3 = ANY (s.types)
       ON CONFLICT (event_id, subscription_id) DO NOTHING`,
      [eventId, event.business_id, event.event_type],
    );
    await q.query('UPDATE events SET dispatched_at = COALESCE(dispatched_at, now()) WHERE id = $1', [eventId]);
    const rows = await q.query<{ id: string; run: number; status: string }>('SELECT id, run, status FROM webhook_deliveries WHERE event_id = $1', [eventId]);
    return rows.map((r) => ({ deliveryId: r.id, run: Number(r.run), status: r.status }));
  });
}

export async function undispatchedEvents(q: Queryable, olderThanMs: number, limit = 500): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    "SELECT id FROM events WHERE dispatched_at IS NULL AND created_at < now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2",
    [olderThanMs / 1000, limit],
  );
  return rows.map((r) => r.id);
}

export type DeliveryTarget = {
  deliveryId: string;
  status: string;
  eventId: string;
  body: string;
  url: string | null; // null: the subscription was deleted
};

export async function deliveryTarget(q: Queryable, deliveryId: string): Promise<DeliveryTarget | undefined> {
  const [r] = await q.query(
    `SELECT d.id, d.status, d.event_id, e.body, s.url FROM webhook_deliveries d
       JOIN events e ON e.id = d.event_id
       LEFT JOIN notification_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1`,
    [deliveryId],
  );
  return r ? { deliveryId: String(r.id), status: String(r.status), eventId: String(r.event_id), body: String(r.body), url: (r.url as string | null) ?? null } : undefined;
}

export async function recordAttempt(
  db: Db,
  a: { deliveryId: string; attempt: number; url: string; keyId: string | null; startedAt: Date; latencyMs: number | null; httpStatus: number | null; error: string | null; succeeded: boolean },
): Promise<void> {
  await db.tx(async (q) => {
    await q.query(
      `INSERT INTO webhook_attempts (id, delivery_id, attempt, url, key_id, started_at, latency_ms, http_status, error, succeeded)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [randomUUID(), a.deliveryId, a.attempt, a.url, a.keyId, a.startedAt, a.latencyMs, a.httpStatus, a.error, a.succeeded],
    );
    await q.query(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, last_error = $2, updated_at = now(),
              status = CASE WHEN $3 AND status = 'pending' THEN 'delivered' ELSE status END,
              delivered_at = CASE WHEN $3 THEN now() ELSE delivered_at END
        WHERE id = $1`,
      [a.deliveryId, a.error, a.succeeded],
    );
  });
}

export async function setDeliveryStatus(q: Queryable, deliveryId: string, status: 'failed' | 'canceled'): Promise<void> {
  await q.query("UPDATE webhook_deliveries SET status = $2, updated_at = now() WHERE id = $1 AND status = 'pending'", [deliveryId, status]);
}

/** Puts deliveries back to pending for another run; returns those it could (not to deleted subscriptions). */
export async function requeueDeliveries(q: Queryable, businessId: string, filter: { eventId: string } | { subscriptionId: string; since: Date }): Promise<{ deliveryId: string; run: number }[]> {
  const rows =
    'eventId' in filter
      ? await q.query<{ id: string; run: number }>(
          `UPDATE webhook_deliveries d SET status = 'pending', run = run + 1, updated_at = now()
            WHERE d.event_id = $1 AND d.business_id = $2 AND d.status <> 'pending'
              AND EXISTS (SELECT 1 FROM notification_subscriptions s WHERE s.id = d.subscription_id) RETURNING id, run`,
          [filter.eventId, businessId],
        )
      : await q.query<{ id: string; run: number }>(
          `UPDATE webhook_deliveries d SET status = 'pending', run = run + 1, updated_at = now()
            WHERE d.subscription_id = $1 AND d.business_id = $2 AND d.status = 'failed' AND d.created_at >= $3 RETURNING id, run`,
          [filter.subscriptionId, businessId, filter.since],
        );
  return rows.map((r) => ({ deliveryId: r.id, run: Number(r.run) }));
}

export type DeliveryLog = {
  deliveryId: string;
  eventId: string;
  subscriptionId: string;
  status: string;
  attempts: { attempt: number; at: string; url: string; keyId: string | null; httpStatus: number | null; latencyMs: number | null; error: string | null; succeeded: boolean }[];
  createdAt: string;
  deliveredAt: string | null;
};

export async function deliveryLog(q: Queryable, businessId: string, filter: { eventId: string } | { subscriptionId: string }, page: Page) {
  const [column, value] = 'eventId' in filter ? ['event_id', filter.eventId] : ['subscription_id', filter.subscriptionId];
  const [count] = await q.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE ${column} = $1 AND business_id = $2`, [value, businessId]);
  const deliveries = await q.query(`SELECT * FROM webhook_deliveries WHERE ${column} = $1 AND business_id = $2 ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`, [value, businessId, page.limit, offsetOf(page)]);
  const attempts = deliveries.length
    ? await q.query('SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY started_at', [deliveries.map((d) => d.id)])
    : [];
  const items: DeliveryLog[] = deliveries.map((d) => ({
    deliveryId: String(d.id),
    eventId: String(d.event_id),
    subscriptionId: String(d.subscription_id),
    status: String(d.status),
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

export async function eventOfBusiness(q: Queryable, businessId: string, eventId: string): Promise<boolean> {
  return (await q.query('SELECT 1 FROM events WHERE id = $1 AND business_id = $2', [eventId, businessId])).length === 1;
}
