// Deliveries of events to subscriptions: the queue the dispatcher claims from (with leases), each
// attempt's record and what follows it, cancellation, and redelivery.
import type { AfterAttempt } from '../domain/webhooks.ts';
import { recordAudit } from './audit-log.ts';
import { iso, type Db, type Queryable, type Row } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';
import { modeUnlessDisabled, NEW_RUN_NOW, noteSubscriptionHealth, outcomesBySubscription, type HealthChange } from './subscription-health.ts';

// An event's deliveries are created with the event (store/events.ts). A delivery is `pending` until
// delivered, failed after its schedule, or canceled; while pending, `mode` says where it stands and
// `next_attempt_at` when it is next due:
//   dispatcher  due for a dispatcher's claim (a first attempt, a redelivery, a retry whose slot came)
//   waiting     its attempt failed: it waits for its next retry slot, costing nothing until then;
//               promoteDueDeliveries hands it to the dispatchers when the slot comes
//   held        its subscription is disabled: no one attempts it until it is enabled
//   workflow    an earlier release's retry workflow owns it (runs started before retries moved here)

/** A delivery claimed for an attempt: what to send, and where (url null: the subscription was deleted). */
export type DeliveryTarget = {
  deliveryId: string;
  eventId: string;
  subscriptionId: string;
  businessId: string;
  status: string;
  mode: string;
  run: number;
  /** Attempts made so far, in all runs (the next attempt's number is this plus one). */
  attempts: number;
  /** Attempts made in the current run (the retry schedule is indexed by it). */
  runAttempts: number;
  body: string;
  url: string | null;
  /** The subscription's secrets as stored (sealed; domain/secret-box.ts), current first: each signs a `v1,` (none before it has one). */
  sealedSecrets: string[];
  /** When the delivery was created (with its event). */
  createdAt: string;
  /** The retry slot it was waiting for when it was sent early (its subscription answered again, or was enabled); null otherwise. */
  resumedSlot: string | null;
};

/** What an attempt needs of its subscription (s): where, and the secrets that sign (a replaced one only while it still does). */
const SUBSCRIPTION_COLUMNS = 's.url, s.secret_sealed, CASE WHEN s.previous_secret_until > now() THEN s.previous_secret_sealed END AS previous_secret_sealed';

const toTarget = (r: Row): DeliveryTarget => ({
  deliveryId: String(r.id),
  eventId: String(r.event_id),
  subscriptionId: String(r.subscription_id),
  businessId: String(r.business_id),
  status: String(r.status),
  mode: String(r.mode),
  run: Number(r.run),
  attempts: Number(r.attempts),
  runAttempts: Number(r.run_attempts),
  body: String(r.body),
  createdAt: iso(r.created_at),
  url: (r.url as string | null) ?? null,
  sealedSecrets: [r.secret_sealed, r.previous_secret_sealed].filter((x): x is string => typeof x === 'string'),
  resumedSlot: r.resumed_slot == null ? null : iso(r.resumed_slot),
});

/** Requests a dispatcher has in flight: per subscription and per business (the claim leaves room for the limits). */
export type InFlight = { bySubscription: ReadonlyMap<string, number>; byBusiness: ReadonlyMap<string, number> };

/**
 * Claims up to `limit` deliveries due for the dispatcher, leasing them for `leaseMs` so no other
 * dispatcher takes them meanwhile. Fair across businesses: the claim takes the oldest due delivery
 * of every business first, then the second of each, and so on (a business's backlog, however
 * large, is one turn among many), and never more than a subscription or a business has room for
 * under `perSubscription` / `perBusiness`, given what is `inFlight`. Subscriptions with due
 * deliveries are found by a skip scan of the dispatch index, each read at most `perSubscription`
 * deep, and the picked ones are locked by their primary key alone, then checked as locked (still
 * pending, for the dispatcher, not leased: another dispatcher may have claimed one meanwhile). Asked
 * with the dispatch index's own conditions, the lock read every due delivery through that index
 * whenever the statistics predated a backlog (40 ms a claim at 35,000 due). So the work per claim
 * does not grow with a backlog.
 */
export async function claimDueDeliveries(
  db: Queryable,
  options: { limit: number; leaseMs: number; perSubscription: number; perBusiness: number; inFlight: InFlight },
): Promise<DeliveryTarget[]> {
  const subs = [...options.inFlight.bySubscription];
  const businesses = [...options.inFlight.byBusiness];
  const rows = await db.query(
    `WITH RECURSIVE subs(id) AS (
       (SELECT subscription_id FROM webhook_deliveries WHERE status = 'pending' AND mode = 'dispatcher' ORDER BY subscription_id LIMIT 1)
       UNION ALL
       SELECT (SELECT d.subscription_id FROM webhook_deliveries d
                WHERE d.status = 'pending' AND d.mode = 'dispatcher' AND d.subscription_id > subs.id ORDER BY d.subscription_id LIMIT 1)
         FROM subs WHERE subs.id IS NOT NULL),
     candidates AS (
       SELECT c.id, c.business_id, c.subscription_id, c.next_attempt_at,
              row_number() OVER (PARTITION BY c.subscription_id ORDER BY c.next_attempt_at) AS sub_rank
         FROM subs CROSS JOIN LATERAL (
           SELECT d.id, d.business_id, d.subscription_id, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.subscription_id = subs.id AND d.status = 'pending' AND d.mode = 'dispatcher'
              AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())
            ORDER BY d.next_attempt_at LIMIT $3) c
        WHERE subs.id IS NOT NULL),
     with_room AS (
       SELECT c.*, row_number() OVER (PARTITION BY c.business_id ORDER BY c.sub_rank, c.next_attempt_at) AS business_rank
         FROM candidates c LEFT JOIN unnest($5::uuid[], $6::int[]) AS s(id, n) ON s.id = c.subscription_id
        WHERE c.sub_rank <= $3 - coalesce(s.n, 0)),
     picked AS (
       SELECT w.id, w.business_rank, w.next_attempt_at
         FROM with_room w LEFT JOIN unnest($7::uuid[], $8::int[]) AS b(id, n) ON b.id = w.business_id
        WHERE w.business_rank <= $4 - coalesce(b.n, 0)
        ORDER BY w.business_rank, w.next_attempt_at
        LIMIT $1),
     locked AS (
       SELECT d.id, d.status, d.mode, d.lease_until FROM webhook_deliveries d
        WHERE d.id = ANY (ARRAY(SELECT id FROM picked))
        FOR UPDATE OF d SKIP LOCKED),
     claimed AS (
       UPDATE webhook_deliveries d SET lease_until = now() + make_interval(secs => $2)
         FROM locked WHERE d.id = locked.id
          AND locked.status = 'pending' AND locked.mode = 'dispatcher' AND (locked.lease_until IS NULL OR locked.lease_until < now())
       RETURNING d.*)
     SELECT c.*, e.body, ${SUBSCRIPTION_COLUMNS} FROM claimed c
       JOIN picked p ON p.id = c.id
       JOIN events e ON e.id = c.event_id
       LEFT JOIN notification_subscriptions s ON s.id = c.subscription_id
      ORDER BY p.business_rank, c.next_attempt_at`,
    [
      options.limit,
      options.leaseMs / 1000,
      options.perSubscription,
      options.perBusiness,
      subs.map(([id]) => id),
      subs.map(([, n]) => n),
      businesses.map(([id]) => id),
      businesses.map(([, n]) => n),
    ],
  );
  return rows.map(toTarget);
}

export async function deliveryTarget(db: Queryable, deliveryId: string): Promise<DeliveryTarget | undefined> {
  const [r] = await db.query(
    `SELECT d.*, e.body, ${SUBSCRIPTION_COLUMNS} FROM webhook_deliveries d
       JOIN events e ON e.id = d.event_id
       LEFT JOIN notification_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1`,
    [deliveryId],
  );
  return r ? toTarget(r) : undefined;
}

/**
 * Waiting deliveries whose retry slot has come go to the dispatchers (mode 'dispatcher'), at most
 * `limit` at a time, oldest slot first; they keep their slot as their due time, so the claim takes
 * them among first attempts by the same fair rule. Rows another dispatcher is promoting, or that a
 * subscription's health change has locked, are skipped (promoted next time). Costs one index probe
 * when nothing is due, however many deliveries wait. The rows are picked and locked once, as an
 * array (an initplan; the lock re-checks each row's conditions), then updated by primary key: asked
 * as `id IN (…)`, or with the conditions repeated outside, the planner — its statistics predating a
 * wave of retries — joined the pick against every due row (54 s for 20,000 due; now 50 ms for 2,000).
 */
export async function promoteDueDeliveries(db: Queryable, limit: number): Promise<number> {
  const rows = await db.query(
    `UPDATE webhook_deliveries d SET mode = 'dispatcher', updated_at = now()
      WHERE d.id = ANY (ARRAY(SELECT id FROM webhook_deliveries
                               WHERE status = 'pending' AND mode = 'waiting' AND next_attempt_at <= now()
                               ORDER BY next_attempt_at LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED))
     RETURNING d.id`,
    [limit],
  );
  return rows.length;
}

/**
 * When an earlier release's retry workflow should next attempt its delivery: ms from now, or null if it has nothing to
 * do (delivered, failed, canceled, held, back with the dispatcher, or — given `run` — a later run's).
 */
export async function waitingDeliveryDueIn(db: Queryable, deliveryId: string, run?: number): Promise<number | null> {
  const [r] = await db.query<{ due_in_ms: number | string }>(
    `SELECT greatest(0, extract(epoch FROM next_attempt_at - now()) * 1000) AS due_in_ms FROM webhook_deliveries
      WHERE id = $1 AND status = 'pending' AND mode = 'workflow' AND ($2::int IS NULL OR run = $2)`,
    [deliveryId, run ?? null],
  );
  return r ? Math.round(Number(r.due_in_ms)) : null;
}

/** One attempt's outcome and what follows it (domain/webhooks.ts afterAttempt). */
export type AttemptRecord = {
  deliveryId: string;
  subscriptionId: string;
  /** The run the attempt was made for: only that run's outcome moves the delivery on (a success always does). */
  run: number;
  /** A failed early attempt (a probe): the delivery goes back to its slot, its place in the schedule unspent. */
  probe: boolean;
  attempt: number;
  url: string;
  keyId: string | null;
  startedAt: Date;
  latencyMs: number | null;
  httpStatus: number | null;
  error: string | null;
  succeeded: boolean;
  /** The receiver answered 410 Gone: its subscription is disabled at once. */
  gone: boolean;
  /** delivered | failed (schedule exhausted) | pending (waits, and is attempted again after delayMs) */
  next: AfterAttempt;
};

/**
 * What recording attempts changed beyond the deliveries: subscriptions' health, deliveries held rather
 * than retried, and those a later run owns by now (their attempt is logged; nothing else moved).
 */
export type Recorded = { healthChanges: HealthChange[]; held: ReadonlySet<string>; superseded: ReadonlySet<string> };

/**
 * Logs attempts and moves their deliveries on, all in one transaction (the dispatcher records many
 * at once), with their subscriptions' health (store/subscription-health.ts): a delivery that is to
 * wait for a retry is held instead when its subscription is disabled. A delivery canceled meanwhile
 * (its subscription deleted) keeps its status.
 */
export async function recordAttempts(db: Db, unsorted: readonly AttemptRecord[], health: { disableAfterMs: number }): Promise<Recorded> {
  if (unsorted.length === 0) return { healthChanges: [], held: new Set(), superseded: new Set() };
  // deliveries are locked in order of their id, as everywhere they are locked together (holding,
  // resuming, deleting a subscription): two transactions never wait on each other in a circle
  const records = [...unsorted].sort((a, b) => (a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : 0));
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  return db.tx(async (tx) => {
    // subscriptions first, then deliveries: the lock order of store/subscription-health.ts
    const healthChanges = await noteSubscriptionHealth(
      tx,
      outcomesBySubscription(records),
      health.disableAfterMs,
      records.map((r) => r.deliveryId),
    );
    await tx.query(
      `INSERT INTO webhook_attempts (id, delivery_id, attempt, url, key_id, started_at, latency_ms, http_status, error, succeeded)
       SELECT gen_random_uuid(), * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::int[], $7::int[], $8::text[], $9::bool[])`,
      [
        col((r) => r.deliveryId),
        col((r) => r.attempt),
        col((r) => r.url),
        col((r) => r.keyId),
        col((r) => r.startedAt),
        col((r) => r.latencyMs),
        col((r) => r.httpStatus),
        col((r) => r.error),
        col((r) => r.succeeded),
      ],
    );
    // Only the run an attempt was made for moves its delivery on; a success always marks it delivered.
    const rows = await tx.query<{ id: string; status: string; mode: string }>(
      `UPDATE webhook_deliveries d SET
              attempts = d.attempts + 1, last_error = u.error, updated_at = now(), lease_until = NULL, resumed_slot = NULL,
              run_attempts = d.run_attempts + CASE WHEN u.probe THEN 0 ELSE 1 END,
              status = CASE WHEN d.status = 'pending' THEN u.status ELSE d.status END,
              delivered_at = CASE WHEN d.status = 'pending' AND u.status = 'delivered' THEN now() ELSE d.delivered_at END,
              mode = CASE WHEN u.status <> 'pending' THEN d.mode ELSE ${modeUnlessDisabled('waiting')} END,
              next_attempt_at = CASE WHEN u.delay_ms IS NULL THEN d.next_attempt_at ELSE now() + make_interval(secs => u.delay_ms / 1000.0) END
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::int[], $6::bool[]) AS u(id, status, error, delay_ms, run, probe)
        WHERE d.id = u.id AND (d.run = u.run OR u.status = 'delivered')
       RETURNING d.id, d.status, d.mode`,
      [
        col((r) => r.deliveryId),
        col((r) => r.next.status),
        col((r) => r.error),
        col((r) => (r.next.status === 'pending' ? r.next.delayMs : null)),
        col((r) => r.run),
        col((r) => r.probe),
      ],
    );
    const moved = new Set(rows.map((r) => String(r.id)));
    const held = new Set(rows.filter((r) => r.status === 'pending' && r.mode === 'held').map((r) => String(r.id)));
    return { healthChanges, held, superseded: new Set(records.filter((r) => !moved.has(r.deliveryId)).map((r) => r.deliveryId)) };
  });
}

/** Cancels pending deliveries (their subscription is gone). */
export async function cancelDeliveries(db: Queryable, deliveryIds: readonly string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db.query(
    "UPDATE webhook_deliveries SET status = 'canceled', lease_until = NULL, updated_at = now() WHERE id = ANY ($1::uuid[]) AND status = 'pending'",
    [deliveryIds],
  );
}

/**
 * Deliveries an earlier release's retry workflow owned that are more than `graceMs` past their slot
 * (a live one attempts within seconds of it) go back to waiting, where the dispatchers take them up:
 * after an upgrade nothing is left to a workflow that no longer starts. As a new run (keeping its
 * place in the schedule): should the workflow still be alive after all, its run no longer owns the
 * delivery, so it sends nothing more and an attempt of it under way moves nothing. Returns how many.
 */
export async function adoptOverdueWorkflowDeliveries(db: Queryable, graceMs: number, limit = 5000): Promise<number> {
  const rows = await db.query(
    `UPDATE webhook_deliveries d SET mode = 'waiting', run = d.run + 1, updated_at = now()
      WHERE d.id = ANY (ARRAY(SELECT id FROM webhook_deliveries
                               WHERE status = 'pending' AND mode = 'workflow' AND next_attempt_at < now() - make_interval(secs => $1)
                               ORDER BY next_attempt_at LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED))
     RETURNING d.id`,
    [graceMs / 1000, limit],
  );
  return rows.length;
}

// a disabled subscription's redeliveries are held with its other deliveries, until it is enabled
const REQUEUE = `status = 'pending', lease_until = NULL, run_attempts = 0, resumed_slot = NULL, ${NEW_RUN_NOW}, mode = ${modeUnlessDisabled('dispatcher')}`;

/**
 * Puts deliveries back to the dispatcher for another run (a redelivery); returns those it could (not
 * to deleted subscriptions). One audit entry per request (event.redelivery_requested), naming what it
 * asked (the event, or the subscription and since when) and how many deliveries went back.
 */
export async function requeueDeliveries(
  db: Writer,
  businessId: string,
  filter: { eventId: string } | { subscriptionId: string; since: Date },
): Promise<{ deliveryId: string; run: number }[]> {
  return inTx(db, async (tx) => {
    const rows = await requeue(tx, businessId, filter);
    const [event] =
      'eventId' in filter
        ? await tx.query<{ entity_id: string | null }>('SELECT entity_id FROM events WHERE id = $1 AND business_id = $2', [filter.eventId, businessId])
        : [];
    recordAudit(tx, {
      businessId,
      action: 'event.redelivery_requested',
      entityId: event?.entity_id ?? null,
      subject: 'eventId' in filter ? { type: 'event', id: filter.eventId } : { type: 'subscription', id: filter.subscriptionId },
      details:
        'eventId' in filter
          ? { eventId: filter.eventId, deliveries: rows.length }
          : { subscriptionId: filter.subscriptionId, since: filter.since.toISOString(), deliveries: rows.length },
    });
    return rows;
  });
}

async function requeue(
  db: Queryable,
  businessId: string,
  filter: { eventId: string } | { subscriptionId: string; since: Date },
): Promise<{ deliveryId: string; run: number }[]> {
  const rows =
    'eventId' in filter
      ? await db.query<{ id: string; run: number }>(
          `UPDATE webhook_deliveries d SET ${REQUEUE}
            WHERE d.event_id = $1 AND d.business_id = $2 AND d.status <> 'pending'
              AND EXISTS (SELECT 1 FROM notification_subscriptions s WHERE s.id = d.subscription_id) RETURNING id, run`,
          [filter.eventId, businessId],
        )
      : await db.query<{ id: string; run: number }>(
          `UPDATE webhook_deliveries d SET ${REQUEUE}
            WHERE d.subscription_id = $1 AND d.business_id = $2 AND d.status = 'failed' AND d.created_at >= $3 RETURNING id, run`,
          [filter.subscriptionId, businessId, filter.since],
        );
  return rows.map((r) => ({ deliveryId: r.id, run: Number(r.run) }));
}
