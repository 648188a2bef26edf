// Events for the webhook pipeline. Recording an event creates its deliveries — one per subscription
// of the business that takes the event's type — in the same statement (and so in the caller's
// transaction, when there is one), so a committed event always has its deliveries waiting for the
// dispatcher: nothing between the record and the first attempt can be lost.
import { randomUUID } from 'node:crypto';
import { recordAudit } from './audit-log.ts';
import type { Tx } from './db.ts';
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
};

/**
 * Records the event and its deliveries (once per sourceKey); returns the event's id. One statement,
 * so the event never exists without its deliveries, in a caller's transaction or on its own; with
 * its audit entry (event.recorded) when it is new.
 */
export function recordEvent(q: Writer, event: NewEvent): Promise<string> {
  return inTx(q, (tx) => insertEvent(tx, event));
}

async function insertEvent(q: Tx, event: NewEvent): Promise<string> {
  const eventId = randomUUID();
  // the bytes every delivery attempt sends; the business is named in them (and so under both
  // signatures), so a receiver serving several businesses cannot be handed one's event as another's
  const { data, ...envelope } = event.payload(eventId) as { data?: unknown };
  const body = JSON.stringify({ ...envelope, businessId: event.businessId, data });
  const [inserted] = await q.query<{ id: string }>(
    `WITH e AS (
       INSERT INTO events (id, business_id, entity_id, event_name, event_type, payload, body, source_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (source_key) DO NOTHING RETURNING id
     ), d AS (
       INSERT INTO webhook_deliveries (id, event_id, subscription_id, business_id)
       SELECT gen_random_uuid(), e.id, s.id, s.business_id FROM e, notification_subscriptions s
        WHERE s.business_id = $2 AND $5 = ANY (s.types)
       ON CONFLICT (event_id, subscription_id) DO NOTHING
     )
     SELECT id FROM e`,
    [eventId, event.businessId, event.entityId, event.eventName, event.eventType, body, body, event.sourceKey],
  );
  if (inserted) {
    recordAudit(q, {
      businessId: event.businessId,
      action: 'event.recorded',
      entityId: event.entityId,
      subject: { type: 'event', id: String(inserted.id) },
      details: { eventType: event.eventType },
    });
    return inserted.id;
  }
  const [existing] = await q.query<{ id: string }>('SELECT id FROM events WHERE source_key = $1', [event.sourceKey]);
  return existing!.id;
}
