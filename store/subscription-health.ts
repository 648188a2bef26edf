// Each subscription's health (issue 23: endpoints that fail for days), kept with the attempts that
// decide it. Healthy while its last attempt succeeded; failing from its first failed attempt after
// that; disabled once it has been failing for `disableAfterMs` (WEBHOOK_DISABLE_AFTER_MS): nothing
// more is sent to it and its pending deliveries are held, kept, until it is enabled again.
//
// The backlog comes back promptly: a success after RESUME_AFTER_FAILING_MS of failures (or an
// enable) hands every delivery waiting for its next retry slot, and every held one, back to the
// dispatcher, due now, in the same transaction. The dispatcher's per-subscription in-flight limit
// paces them; an attempt of the old run already under way records its outcome but moves nothing
// (store/deliveries.ts recordAttempts). An early attempt is a probe: if it fails,
// its delivery goes back to the slot it was waiting for (resumed_slot) without spending a place in
// its retry schedule, so however often a subscription answers again (or is enabled), a delivery its
// receiver keeps refusing still gets its ten attempts over about three days.
//
// Lock order, as everywhere deliveries and subscriptions are written together (deleting a
// subscription): the subscription rows first (by id), then their deliveries (by id, FOR NO KEY
// UPDATE, which the attempts' foreign-key locks do not conflict with). Races the locks do not close
// (an event recorded for a subscription as it is enabled, disabled or deleted) are mended by the
// reconciler within a minute (reconcileHeldDeliveries).
import { PROBE, RESUME_AFTER_FAILING_MS } from '../domain/webhooks.ts';
import { recordAudit } from './audit-log.ts';
import { iso, type Queryable, type Tx } from './db.ts';
import { toSubscription, type Subscription } from './subscription-row.ts';

/** The subscription of a delivery `d`: when it was disabled (null while enabled, or when it is gone). */
const DISABLED_AT_OF_D = '(SELECT s.disabled_at FROM notification_subscriptions s WHERE s.id = d.subscription_id)';

/**
 * The rule, once: a disabled subscription's delivery is held, not sent. The mode of a delivery going
 * to `mode` (due for the dispatcher, or waiting for its next retry slot), given its subscription's disabled_at (by
 * default looked up for the delivery `d`).
 */
export const modeUnlessDisabled = (mode: 'dispatcher' | 'waiting', disabledAt = DISABLED_AT_OF_D): string =>
  `CASE WHEN ${disabledAt} IS NULL THEN '${mode}' ELSE 'held' END`;

/** A delivery `d` back to the dispatcher as a new run, due now (the assignments beside its mode). */
export const NEW_RUN_NOW = 'next_attempt_at = now(), run = d.run + 1, updated_at = now()';

/**
 * What one subscription's attempts in a transaction came to. gone: a receiver answered 410 and none
 * succeeded; goneUrl: the URL that answered it (the subscription is disabled only if it still has it).
 */
export type SubscriptionOutcome = { subscriptionId: string; succeeded: boolean; gone: boolean; goneUrl?: string; firstFailureAt: Date | null };

/** A subscription whose health changed. */
export type HealthChange = { subscriptionId: string; to: 'healthy' | 'failing' | 'disabled'; deliveries: number };

/** Attempts of a batch, per subscription: any success makes it healthy (its receiver answers). */
export function outcomesBySubscription(
  attempts: readonly { subscriptionId: string; succeeded: boolean; gone?: boolean; url?: string; startedAt: Date }[],
): SubscriptionOutcome[] {
  const by = new Map<string, SubscriptionOutcome>();
  for (const a of attempts) {
    const o = by.get(a.subscriptionId) ?? { subscriptionId: a.subscriptionId, succeeded: false, gone: false, firstFailureAt: null };
    if (a.succeeded) o.succeeded = true;
    else {
      if (a.gone) {
        o.gone = true;
        o.goneUrl = a.url;
      }
      if (!o.firstFailureAt || a.startedAt < o.firstFailureAt) o.firstFailureAt = a.startedAt;
    }
    by.set(a.subscriptionId, o);
  }
  return [...by.values()].map((o) => (o.succeeded ? { subscriptionId: o.subscriptionId, succeeded: true, gone: false, firstFailureAt: o.firstFailureAt } : o));
}

/**
 * Moves the subscriptions' health on from their attempts' outcomes, in the attempts' transaction,
 * and touches only those whose state changes: a success ends a failing run (and sends its backlog
 * if it lasted RESUME_AFTER_FAILING_MS or the subscription was disabled); a failure starts one, or
 * disables the subscription once its run has lasted `disableAfterMs`.
 */
export async function noteSubscriptionHealth(
  tx: Tx,
  outcomes: readonly SubscriptionOutcome[],
  disableAfterMs: number,
  /** The deliveries whose attempts these are: their own record moves them, not the backlog's. */
  attempted: readonly string[],
): Promise<HealthChange[]> {
  if (outcomes.length === 0) return [];
  const rows = await tx.query<{
    id: string;
    business_id: string;
    ok: boolean;
    gone: boolean;
    was_failing: Date | null;
    was_disabled: Date | null;
    resume: boolean;
    disabled_at: Date | null;
    failing_since: Date | null;
  }>(
    `WITH o AS (SELECT * FROM unnest($1::uuid[], $2::bool[], $3::timestamptz[], $6::bool[], $7::text[]) AS o(id, ok, first_failure, gone_at, gone_url)),
     l AS (
       -- gone: a 410 from the URL the subscription still has (not one a PUT replaced meanwhile; the lock re-reads the row)
       SELECT s.id, s.failing_since, s.disabled_at, coalesce(o.gone_at AND s.url = o.gone_url, false) AS gone
         FROM notification_subscriptions s JOIN o ON o.id = s.id
        WHERE (o.ok AND (s.failing_since IS NOT NULL OR s.disabled_at IS NOT NULL))
           OR (NOT o.ok AND s.disabled_at IS NULL
               AND ((o.gone_at AND s.url = o.gone_url) OR s.failing_since IS NULL OR s.failing_since < now() - make_interval(secs => $4)))
        ORDER BY s.id FOR UPDATE OF s)
     UPDATE notification_subscriptions s SET
            failing_since = CASE WHEN o.ok THEN NULL ELSE coalesce(l.failing_since, o.first_failure) END,
            next_probe_at = CASE WHEN o.ok THEN NULL ELSE s.next_probe_at END,
            disabled_at = CASE WHEN o.ok THEN NULL WHEN l.gone OR l.failing_since IS NOT NULL THEN now() ELSE NULL END
       FROM l JOIN o ON o.id = l.id
      WHERE s.id = l.id
     RETURNING s.id, s.business_id, o.ok, l.gone, l.failing_since AS was_failing, l.disabled_at AS was_disabled,
               (l.disabled_at IS NOT NULL OR l.failing_since < now() - make_interval(secs => $5)) AS resume, s.disabled_at, s.failing_since`,
    [
      outcomes.map((o) => o.subscriptionId),
      outcomes.map((o) => o.succeeded),
      outcomes.map((o) => o.firstFailureAt),
      disableAfterMs / 1000,
      RESUME_AFTER_FAILING_MS / 1000,
      outcomes.map((o) => o.gone),
      outcomes.map((o) => o.goneUrl ?? null),
    ],
  );
  const changes: HealthChange[] = [];
  for (const r of rows.sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const id = String(r.id);
    if (r.ok) {
      const deliveries = r.resume ? await resumeBacklog(tx, id, attempted) : 0;
      if (r.was_disabled)
        recordAudit(tx, {
          businessId: String(r.business_id),
          action: 'subscription.enabled',
          subject: { type: 'subscription', id },
          details: { by: 'delivered', disabledAt: iso(r.was_disabled), resumedDeliveries: deliveries },
        });
      changes.push({ subscriptionId: id, to: 'healthy', deliveries });
    } else if (r.disabled_at) {
      const held = await holdBacklog(tx, id);
      recordAudit(tx, {
        businessId: String(r.business_id),
        action: 'subscription.disabled',
        subject: { type: 'subscription', id },
        // gone: the receiver answered 410, and the subscription is disabled at once (its failing began then, or earlier)
        details: { failingSince: iso(r.was_failing ?? r.failing_since), heldDeliveries: held, reason: r.gone ? 'gone' : 'failing' },
      });
      changes.push({ subscriptionId: id, to: 'disabled', deliveries: held });
    } else changes.push({ subscriptionId: id, to: 'failing', deliveries: 0 });
  }
  return changes;
}

/**
 * Every pending delivery of a disabled subscription is held: kept, attempted by no one. A claim
 * under way keeps its lease (its attempt is recorded; a failure is held then).
 */
async function holdBacklog(db: Queryable, subscriptionId: string): Promise<number> {
  const rows = await db.query(
    `UPDATE webhook_deliveries d SET mode = 'held', updated_at = now()
      WHERE d.id IN (SELECT id FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'pending' AND mode <> 'held' ORDER BY id FOR NO KEY UPDATE)
     RETURNING d.id`,
    [subscriptionId],
  );
  return rows.length;
}

/**
 * The subscription's waiting and held deliveries go to the dispatcher, due now, as a new run (an
 * earlier release's retry workflow, if any, is superseded), each remembering the slot it was waiting for.
 */
async function resumeBacklog(db: Queryable, subscriptionId: string, except: readonly string[] = []): Promise<number> {
  const rows = await db.query(
    `UPDATE webhook_deliveries d SET mode = 'dispatcher', resumed_slot = CASE WHEN d.mode IN ('waiting', 'workflow') THEN d.next_attempt_at END, ${NEW_RUN_NOW}
      WHERE d.id IN (SELECT id FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'pending' AND mode IN ('waiting', 'workflow', 'held')
                        AND NOT (id = ANY ($2::uuid[])) ORDER BY id FOR NO KEY UPDATE)
     RETURNING d.id`,
    [subscriptionId, except],
  );
  return rows.length;
}

/**
 * Probes (issue 38, item 4): each subscription failing for over RESUME_AFTER_FAILING_MS, not
 * disabled, whose probe time has come, gets one waiting delivery — the one with the nearest slot —
 * sent now, as an early attempt (a new run remembering its slot, so a failure spends no place in its
 * schedule), and its next probe time set (domain/webhooks.ts PROBE). Once a probe succeeds, the success
 * resumes the whole backlog (noteSubscriptionHealth). Subscriptions are locked first, then their
 * deliveries (the lock order above); one another dispatcher is probing is skipped. Returns how many
 * deliveries it sent early.
 */
export async function probeFailingSubscriptions(db: Queryable, limit = 100): Promise<number> {
  const rows = await db.query(
    `WITH due AS (
       SELECT s.id, s.failing_since FROM notification_subscriptions s
        WHERE s.failing_since IS NOT NULL AND s.disabled_at IS NULL AND s.failing_since < now() - make_interval(secs => $1::float8)
          AND (s.next_probe_at IS NULL OR s.next_probe_at <= now())
        ORDER BY s.next_probe_at NULLS FIRST, s.id LIMIT $2 FOR UPDATE OF s SKIP LOCKED),
     timed AS (
       UPDATE notification_subscriptions s
          SET next_probe_at = now() + make_interval(secs =>
                CASE WHEN due.failing_since > now() - make_interval(secs => $5::float8) THEN $3::float8 ELSE $4::float8 END)
         FROM due WHERE s.id = due.id RETURNING s.id),
     picked AS (
       SELECT p.id FROM due CROSS JOIN LATERAL (
         SELECT d.id FROM webhook_deliveries d
          WHERE d.subscription_id = due.id AND d.status = 'pending' AND d.mode = 'waiting' AND d.next_attempt_at > now()
          ORDER BY d.next_attempt_at LIMIT 1 FOR NO KEY UPDATE OF d SKIP LOCKED) p)
     UPDATE webhook_deliveries d SET mode = 'dispatcher', resumed_slot = d.next_attempt_at, ${NEW_RUN_NOW}
       FROM picked WHERE d.id = picked.id
     RETURNING d.id`,
    [RESUME_AFTER_FAILING_MS / 1000, limit, PROBE.firstMs / 1000, PROBE.laterMs / 1000, PROBE.firstForMs / 1000],
  );
  return rows.length;
}

/**
 * The reconciler's mend (every minute): deliveries held for a subscription that is no longer
 * disabled go to the dispatcher; held ones of a deleted subscription are canceled; pending ones of a
 * disabled subscription are held. Each can follow an event recorded as its subscription was enabled,
 * deleted or disabled. Returns how many it moved.
 */
export async function reconcileHeldDeliveries(db: Queryable): Promise<number> {
  const rows = await db.query(
    `WITH released AS (
       UPDATE webhook_deliveries d SET mode = 'dispatcher', ${NEW_RUN_NOW}
        WHERE d.status = 'pending' AND d.mode = 'held'
          AND EXISTS (SELECT 1 FROM notification_subscriptions s WHERE s.id = d.subscription_id AND s.disabled_at IS NULL)
       RETURNING d.id),
     gone AS (
       UPDATE webhook_deliveries d SET status = 'canceled', updated_at = now()
        WHERE d.status = 'pending' AND d.mode = 'held'
          AND NOT EXISTS (SELECT 1 FROM notification_subscriptions s WHERE s.id = d.subscription_id)
       RETURNING d.id),
     held AS (
       UPDATE webhook_deliveries d SET mode = 'held', updated_at = now()
         FROM notification_subscriptions s
        WHERE s.disabled_at IS NOT NULL AND d.subscription_id = s.id AND d.status = 'pending' AND d.mode <> 'held'
          AND (d.lease_until IS NULL OR d.lease_until < now())
       RETURNING d.id)
     SELECT id FROM released UNION ALL SELECT id FROM gone UNION ALL SELECT id FROM held`,
  );
  return rows.length;
}

/**
 * POST /notification/{id}/enable: the subscription is healthy again and its waiting and held
 * deliveries go to the dispatcher now. Undefined when the business has no such subscription.
 */
export async function enableSubscription(
  db: { tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> },
  businessId: string,
  id: string,
): Promise<{ subscription: Subscription; resumed: number } | undefined> {
  return db.tx((tx) => enableIn(tx, businessId, id, 'request'));
}

/**
 * Enables the subscription in the caller's transaction. `by`: `request` (POST …/enable), `replaced`
 * (a PUT gave it a new URL, store/subscriptions.ts).
 */
export async function enableIn(
  tx: Tx,
  businessId: string,
  id: string,
  by: 'request' | 'replaced',
): Promise<{ subscription: Subscription; resumed: number } | undefined> {
  const [before] = await tx.query<{ failing_since: Date | null; disabled_at: Date | null }>(
    'SELECT failing_since, disabled_at FROM notification_subscriptions WHERE id = $1 AND business_id = $2 FOR UPDATE',
    [id, businessId],
  );
  if (!before) return undefined;
  const [r] = await tx.query('UPDATE notification_subscriptions SET failing_since = NULL, disabled_at = NULL WHERE id = $1 RETURNING *', [id]);
  const resumed = await resumeBacklog(tx, id);
  if (before.failing_since || before.disabled_at || resumed > 0)
    recordAudit(tx, {
      businessId,
      action: 'subscription.enabled',
      subject: { type: 'subscription', id },
      details: {
        by,
        disabledAt: before.disabled_at ? iso(before.disabled_at) : null,
        failingSince: before.failing_since ? iso(before.failing_since) : null,
        resumedDeliveries: resumed,
      },
    });
  return { subscription: toSubscription(r!), resumed };
}

/** Subscriptions by health, for the metrics gauge (the unhealthy ones through their own index). */
export async function subscriptionHealthCounts(db: Queryable): Promise<Record<'healthy' | 'failing' | 'disabled', number>> {
  const [r] = await db.query<{ total: string; failing: string; disabled: string }>(
    `SELECT (SELECT count(*) FROM notification_subscriptions) AS total,
            count(*) FILTER (WHERE disabled_at IS NULL) AS failing, count(*) FILTER (WHERE disabled_at IS NOT NULL) AS disabled
       FROM notification_subscriptions WHERE failing_since IS NOT NULL OR disabled_at IS NOT NULL`,
  );
  const failing = Number(r!.failing);
  const disabled = Number(r!.disabled);
  return { healthy: Number(r!.total) - failing - disabled, failing, disabled };
}
