// The events feed a business reads (domain/event-feed.ts): its events after a sequence, oldest first,
// each with how its deliveries stand. An event is numbered as its transaction commits (migration
// 034), so one not numbered yet is not visible yet either. An event about an entity that is gone from
// the API (deleted, or sealed under a retention policy) is not listed: what is deleted is gone on
// every path (docs/guarantees.md), the feed's too.
import type { FeedEvent } from '../domain/event-feed.ts';
import { iso, type Queryable } from './db.ts';

export async function eventFeed(db: Queryable, businessId: string, after: number, limit: number): Promise<{ items: FeedEvent[]; hasMore: boolean }> {
  const rows = await db.query(
    `SELECT e.id, e.sequence, e.event_name, e.event_type, e.entity_id, e.created_at, e.body,
            d.total, d.delivered, d.pending, d.failed, d.canceled
       FROM events e
       CROSS JOIN LATERAL (
         SELECT count(*) AS total,
                count(*) FILTER (WHERE status = 'delivered') AS delivered,
                count(*) FILTER (WHERE status = 'pending') AS pending,
                count(*) FILTER (WHERE status = 'failed') AS failed,
                count(*) FILTER (WHERE status = 'canceled') AS canceled
           FROM webhook_deliveries WHERE event_id = e.id) d
      WHERE e.business_id = $1 AND e.sequence > $2
        AND (e.entity_id IS NULL OR EXISTS (SELECT 1 FROM entities x WHERE x.id = e.entity_id))
      ORDER BY e.sequence
      LIMIT $3`,
    [businessId, after, limit + 1],
  );
  const items = rows.slice(0, limit).map((r) => ({
    eventId: String(r.id),
    sequence: Number(r.sequence),
    eventName: String(r.event_name),
    eventType: String(r.event_type),
    entityId: r.entity_id == null ? null : String(r.entity_id),
    createdAt: iso(r.created_at),
    payload: JSON.parse(String(r.body)) as Record<string, unknown>,
    deliveries: {
      total: Number(r.total),
      delivered: Number(r.delivered),
      pending: Number(r.pending),
      failed: Number(r.failed),
      canceled: Number(r.canceled),
    },
  }));
  return { items, hasMore: rows.length > limit };
}
