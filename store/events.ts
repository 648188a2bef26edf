// Events for the webhook pipeline. Recording an event creates its deliveries — one per subscription
// of the business that takes the event's type — in the same statement (and so in the caller's
// transaction, when there is one), so a committed event always has its deliveries waiting for the
// dispatcher: nothing between the record and the first attempt can be lost.
import { randomUUID } from 'node:crypto';
import { recordAudit } from './audit-log.ts';
import { TEST_EVENT, testEvent } from '../domain/events.ts';
import type { Db, Queryable, Tx } from './db.ts';
import { modeUnlessDisabled } from './subscription-health.ts';
import { inTx, type Writer } from './in-tx.ts';

export type NewEvent = {
  businessId: string;
  entityId: string | null;
  eventName: string;
  eventType: string;
  /** Builds the payload for the event's id (interface 2.10 carries it in data.eventId). */
  payload(eventId: string): object;
  /** Makes recording idempotent: a second record with the same key returns the first event's id. */
  sourceKey: string;
  /** Delivered to this subscription alone, whatever types it takes (a test event); otherwise to every subscription taking the type. */
  onlySubscription?: string;
};

/**
 * Records the event and its deliveries (once per sourceKey); returns the event's id. One statement,
 * so the event never exists without its deliveries, in a caller's transaction or on its own; with
 * its audit entry (event.recorded) when it is new.
 */
export function recordEvent(db: Writer, event: NewEvent): Promise<string> {
  return inTx(db, (tx) => insertEvent(tx, event));
}

/**
 * The bytes every delivery attempt sends; the business is named in them (and so under both
 * signatures), so a receiver serving several businesses cannot be handed one's event as another's.
 * The last member, `sequence`, is written 0 here and numbered when the transaction commits
 * (migration 034): the business's events feed (GET /events) in the order they became visible.
 */
function eventBody(event: NewEvent, eventId: string): string {
  const { data, ...envelope } = event.payload(eventId) as { data?: unknown };
  return JSON.stringify({ ...envelope, businessId: event.businessId, data, sequence: 0 });
}

/**
 * A test event for the subscription (domain/events.ts testEvent), delivered to it alone; undefined
 * when the business has no such subscription. The subscription is held (FOR SHARE) while the event is
 * recorded, so a delete racing it leaves either both or the subscription's deletion canceling the delivery.
 */
export async function recordTestEvent(db: Db, businessId: string, subscriptionId: string, now: Date): Promise<string | undefined> {
  return db.tx(async (tx) => {
    const [s] = await tx.query('SELECT id FROM notification_subscriptions WHERE id = $1 AND business_id = $2 FOR SHARE', [subscriptionId, businessId]);
    if (!s) return undefined;
    return insertEvent(tx, {
      businessId,
      entityId: null,
      ...TEST_EVENT,
      payload: (eventId) => testEvent({ eventId, subscriptionId, timestamp: now.toISOString() }),
      sourceKey: `test:${randomUUID()}`,
      onlySubscription: subscriptionId,
    });
  });
}

async function insertEvent(tx: Tx, event: NewEvent): Promise<string> {
  const eventId = randomUUID();
  const body = eventBody(event, eventId);
  const [inserted] = await tx.query<{ id: string }>(
    `WITH e AS (
       INSERT INTO events (id, business_id, entity_id, event_name, event_type, payload, body, source_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (source_key) DO NOTHING RETURNING id
     ), d AS (
       INSERT INTO webhook_deliveries (id, event_id, subscription_id, business_id, mode)
       SELECT gen_random_uuid(), e.id, s.id, s.business_id, ${modeUnlessDisabled('dispatcher', 's.disabled_at')}
         FROM e, notification_subscriptions s
        WHERE s.business_id = $2 AND CASE WHEN $9::uuid IS NULL THEN $5 = ANY (s.types) ELSE s.id = $9 END
       ON CONFLICT (event_id, subscription_id) DO NOTHING
     )
     SELECT id FROM e`,
    [eventId, event.businessId, event.entityId, event.eventName, event.eventType, body, body, event.sourceKey, event.onlySubscription ?? null],
  );
  if (inserted) {
    recordAudit(tx, {
      businessId: event.businessId,
      action: 'event.recorded',
      entityId: event.entityId,
      subject: { type: 'event', id: String(inserted.id) },
      details: { eventType: event.eventType },
    });
    return inserted.id;
  }
  const [existing] = await tx.query<{ id: string }>('SELECT id FROM events WHERE source_key = $1', [event.sourceKey]);
  return existing!.id;
}

/**
 * Records many events of one business and type at once, each once per sourceKey, with their
 * deliveries, in one statement (a change that touches hundreds of entities: member assignments);
 * with an audit entry (event.recorded) for each new one. Returns the new events' ids.
 */
export async function recordEvents(tx: Tx, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const first = events[0]!;
  if (events.some((e) => e.businessId !== first.businessId || e.eventType !== first.eventType || e.eventName !== first.eventName))
    throw new Error('recordEvents: one business and one event type per call');
  const ids = events.map(() => randomUUID());
  const inserted = await tx.query<{ id: string; entity_id: string | null }>(
    `WITH e AS (
       INSERT INTO events (id, business_id, entity_id, event_name, event_type, payload, body, source_key)
       SELECT x.id, $1, x.entity_id, $2, $3, x.body::jsonb, x.body, x.source_key
         FROM unnest($4::uuid[], $5::uuid[], $6::text[], $7::text[]) AS x(id, entity_id, body, source_key)
       ON CONFLICT (source_key) DO NOTHING RETURNING id, entity_id
     ), d AS (
       INSERT INTO webhook_deliveries (id, event_id, subscription_id, business_id, mode)
       SELECT gen_random_uuid(), e.id, s.id, s.business_id, ${modeUnlessDisabled('dispatcher', 's.disabled_at')}
         FROM e, notification_subscriptions s
        WHERE s.business_id = $1 AND $3 = ANY (s.types)
       ON CONFLICT (event_id, subscription_id) DO NOTHING
     )
     SELECT id, entity_id FROM e`,
    [
      first.businessId,
      first.eventName,
      first.eventType,
      ids,
      events.map((e) => e.entityId),
      events.map((e, i) => eventBody(e, ids[i]!)),
      events.map((e) => e.sourceKey),
    ],
  );
  for (const row of inserted) {
    recordAudit(tx, {
      businessId: first.businessId,
      action: 'event.recorded',
      entityId: row.entity_id == null ? null : String(row.entity_id),
      subject: { type: 'event', id: String(row.id) },
      details: { eventType: first.eventType },
    });
  }
  return inserted.map((r) => String(r.id));
}

/** The latest decision event about the entity (any person path), which closes a hosted-SDK round. */
export async function lastDecisionEventOf(db: Queryable, entityId: string, eventType: string): Promise<string | null> {
  const [row] = await db.query<{ id: string }>('SELECT id FROM events WHERE entity_id = $1 AND event_type = $2 ORDER BY created_at DESC, id LIMIT 1', [
    entityId,
    eventType,
  ]);
  return row ? String(row.id) : null;
}
