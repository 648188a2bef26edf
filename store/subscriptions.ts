// Webhook subscriptions (interface 2.6, 4.2): a business's destinations and the event types each takes.
import type { SubscribedTypes } from '../domain/webhook-prerequisite.ts';
import { randomUUID } from 'node:crypto';
import { MAX_SUBSCRIPTIONS, type SubscriptionInput, type SubscriptionView } from '../domain/webhooks.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';
import { sha256Hex } from '../domain/digests.ts';
import { recordAudit } from './audit-log.ts';
import { isTx, iso, type Db, type Queryable, type Tx } from './db.ts';
import { enableIn } from './subscription-health.ts';
import { toSubscription, type Subscription } from './subscription-row.ts';

export { toSubscription, type Subscription };

/** subscription.created / replaced: what it takes (event types) and the SHA-256 of where it sends (the URL may hold a secret). */
function recordSubscription(tx: Tx, businessId: string, s: Subscription, action: 'subscription.created' | 'subscription.replaced'): void {
  recordAudit(tx, {
    businessId,
    action,
    subject: { type: 'subscription', id: s.id },
    details: { channel: s.channel, types: [...s.types].sort().join(','), urlSha256: sha256Hex(s.url) },
  });
}

export class SubscriptionLimitReached extends Error {}

/**
 * Creates a subscription unless the business already has MAX_SUBSCRIPTIONS (checked under a lock),
 * with its secret as `sealSecret` seals it for the new subscription's id (without one, it has none
 * until issueMissingSecrets gives it one, as a subscription made before secrets existed).
 */
export async function createSubscription(
  db: Db,
  businessId: string,
  input: SubscriptionInput,
  sealSecret?: (subscriptionId: string) => string,
): Promise<Subscription> {
  return db.tx(async (tx) => {
    await tx.query('SELECT id FROM businesses WHERE id = $1 FOR UPDATE', [businessId]);
    const [count] = await tx.query<{ n: string }>('SELECT count(*) AS n FROM notification_subscriptions WHERE business_id = $1', [businessId]);
    if (Number(count!.n) >= MAX_SUBSCRIPTIONS) throw new SubscriptionLimitReached();
    const id = randomUUID();
    const [r] = await tx.query(
      'INSERT INTO notification_subscriptions (id, business_id, channel, types, url, secret_sealed) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
      [id, businessId, input.notificationChannel, input.notificationTypes, input.webhookUrl, sealSecret?.(id) ?? null],
    );
    const created = toSubscription(r!);
    recordSubscription(tx, businessId, created, 'subscription.created');
    return created;
  });
}

export async function listSubscriptions(db: Db, businessId: string, page: Page) {
  const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM notification_subscriptions WHERE business_id = $1', [businessId]);
  const rows = await db.query('SELECT * FROM notification_subscriptions WHERE business_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3', [
    businessId,
    page.limit,
    offsetOf(page),
  ]);
  return { items: rows.map(toSubscription), totalItems: Number(count!.n) };
}

export async function getSubscription(db: Queryable, businessId: string, id: string): Promise<Subscription | undefined> {
  const [r] = await db.query('SELECT * FROM notification_subscriptions WHERE id = $1 AND business_id = $2', [id, businessId]);
  return r ? toSubscription(r) : undefined;
}

/**
 * Replaces channel, types and URL. A new URL for a failing or disabled subscription is a fresh start:
 * in the same transaction it is enabled and its waiting and held deliveries go to the dispatcher.
 */
export async function replaceSubscription(db: Db, businessId: string, id: string, input: SubscriptionInput): Promise<Subscription | undefined> {
  return db.tx(async (tx) => {
    const [before] = await tx.query<{ url: string; failing_since: Date | null; disabled_at: Date | null }>(
      'SELECT url, failing_since, disabled_at FROM notification_subscriptions WHERE id = $1 AND business_id = $2 FOR UPDATE',
      [id, businessId],
    );
    if (!before) return undefined;
    const [r] = await tx.query('UPDATE notification_subscriptions SET channel = $2, types = $3, url = $4, updated_at = now() WHERE id = $1 RETURNING *', [
      id,
      input.notificationChannel,
      input.notificationTypes,
      input.webhookUrl,
    ]);
    const replaced = toSubscription(r!);
    recordSubscription(tx, businessId, replaced, 'subscription.replaced');
    if (before.url === replaced.url || (!before.failing_since && !before.disabled_at)) return replaced;
    return (await enableIn(tx, businessId, id, 'replaced'))!.subscription;
  });
}

/** Deletes the subscription and cancels its pending deliveries; returns those a retry workflow was waiting on. */
export async function deleteSubscription(db: Db, businessId: string, id: string): Promise<{ deliveryId: string; run: number }[] | undefined> {
  return db.tx(async (tx) => {
    const gone = await tx.query('DELETE FROM notification_subscriptions WHERE id = $1 AND business_id = $2 RETURNING id', [id, businessId]);
    if (gone.length === 0) return undefined;
    const pending = await tx.query<{ id: string; run: number; mode: string }>(
      "UPDATE webhook_deliveries SET status = 'canceled', lease_until = NULL, updated_at = now() " +
        "WHERE subscription_id = $1 AND status = 'pending' RETURNING id, run, mode",
      [id],
    );
    recordAudit(tx, {
      businessId,
      action: 'subscription.deleted',
      subject: { type: 'subscription', id },
      details: { canceledDeliveries: pending.length },
    });
    return pending.filter((p) => p.mode === 'workflow').map((p) => ({ deliveryId: p.id, run: Number(p.run) }));
  });
}

/** The business's subscriptions, each with the event types it takes and whether it is disabled (domain/webhook-prerequisite.ts decides from them). */
export async function subscribedTypes(db: Queryable, businessId: string): Promise<SubscribedTypes[]> {
  const rows = await db.query<{ id: string; types: string[]; disabled: boolean }>(
    'SELECT id, types, disabled_at IS NOT NULL AS disabled FROM notification_subscriptions WHERE business_id = $1',
    [businessId],
  );
  return rows.map((r) => ({ id: String(r.id), types: r.types.map(String), disabled: r.disabled }));
}

/** Whether the business has a subscription that takes this event type (an event is recorded only then). */
export async function subscribesTo(db: Queryable, businessId: string, eventType: string): Promise<boolean> {
  // a transaction asks once per business (a batch's step records many events of one business)
  const key = `subscribed-types:${businessId}`;
  let types = isTx(db) ? (db.memo.get(key) as ReadonlySet<string> | undefined) : undefined;
  if (!types) {
    const rows = await db.query<{ types: string[] }>('SELECT types FROM notification_subscriptions WHERE business_id = $1', [businessId]);
    types = new Set(rows.flatMap((r) => r.types));
    if (isTx(db)) db.memo.set(key, types);
  }
  return types.has(eventType);
}

/** A subscription's secrets as stored (sealed): the current one, and the one a rotation replaced while it still signs. */
export type SealedSecrets = { sealed: string | null; previousSealed: string | null; previousUntil: string | null };

/** A caller reads the subscription's secret: its audit entry (subscription.secret_read), in a transaction of its own. */
export async function noteSecretRead(db: Db, businessId: string, id: string): Promise<void> {
  await db.tx(async (tx) => recordAudit(tx, { businessId, action: 'subscription.secret_read', subject: { type: 'subscription', id } }));
}

export async function subscriptionSecrets(db: Queryable, businessId: string, id: string): Promise<SealedSecrets | undefined> {
  const [r] = await db.query<{ secret_sealed: string | null; previous_secret_sealed: string | null; previous_secret_until: Date | null }>(
    `SELECT secret_sealed,
            CASE WHEN previous_secret_until > now() THEN previous_secret_sealed END AS previous_secret_sealed,
            CASE WHEN previous_secret_until > now() THEN previous_secret_until END AS previous_secret_until
       FROM notification_subscriptions WHERE id = $1 AND business_id = $2`,
    [id, businessId],
  );
  if (!r) return undefined;
  return { sealed: r.secret_sealed, previousSealed: r.previous_secret_sealed, previousUntil: r.previous_secret_until ? iso(r.previous_secret_until) : null };
}

/**
 * A new secret (sealed by `sealSecret`) for the subscription; the one it replaces keeps signing beside
 * it for `overlapMs`, and one rotated out earlier stops at once. With the audit entry (never the secret).
 */
export async function rotateSubscriptionSecret(
  db: Db,
  businessId: string,
  id: string,
  sealSecret: (subscriptionId: string) => string,
  overlapMs: number,
): Promise<SealedSecrets | undefined> {
  return db.tx(async (tx) => {
    const [r] = await tx.query<{ secret_sealed: string; previous_secret_sealed: string | null; previous_secret_until: Date | null }>(
      `UPDATE notification_subscriptions
          SET previous_secret_sealed = secret_sealed,
              previous_secret_until = CASE WHEN secret_sealed IS NULL THEN NULL ELSE now() + make_interval(secs => $4) END,
              secret_sealed = $3, updated_at = now()
        WHERE id = $1 AND business_id = $2
       RETURNING secret_sealed, previous_secret_sealed, previous_secret_until`,
      [id, businessId, sealSecret(id), overlapMs / 1000],
    );
    if (!r) return undefined;
    recordAudit(tx, {
      businessId,
      action: 'subscription.secret_rotated',
      subject: { type: 'subscription', id },
      details: { previousSecretUntil: r.previous_secret_until ? iso(r.previous_secret_until) : null },
    });
    return {
      sealed: r.secret_sealed,
      previousSealed: r.previous_secret_sealed,
      previousUntil: r.previous_secret_until ? iso(r.previous_secret_until) : null,
    };
  });
}

/**
 * Gives subscriptions made before secrets existed (migration 033) one each, at most `limit` per call (or the `only` one);
 * a subscription that got one meanwhile keeps it. Returns how many were given one.
 */
export async function issueMissingSecrets(
  db: Queryable,
  sealSecret: (subscriptionId: string) => string,
  options: { limit?: number; only?: string } = {},
): Promise<number> {
  const rows = await db.query<{ id: string }>(
    'SELECT id FROM notification_subscriptions WHERE secret_sealed IS NULL AND ($2::uuid IS NULL OR id = $2) LIMIT $1',
    [options.limit ?? 500, options.only ?? null],
  );
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => String(r.id));
  const issued = await db.query(
    `UPDATE notification_subscriptions s SET secret_sealed = x.sealed
       FROM unnest($1::uuid[], $2::text[]) AS x(id, sealed)
      WHERE s.id = x.id AND s.secret_sealed IS NULL RETURNING s.id`,
    [ids, ids.map(sealSecret)],
  );
  return issued.length;
}

/**
 * Seals again, under the ring's first key, the secrets sealed under another (a key put first by
 * `vouch payload-keys rotate`), at most `limit` per call, so an old key of the ring can be retired
 * once none is left. A secret that no key of the ring opens is left as it is (reported). Returns how
 * many were sealed again, and the subscriptions whose secrets did not open.
 */
export async function resealSecrets(
  db: Queryable,
  current: string,
  reseal: (subscriptionId: string, sealed: string) => string,
  limit = 500,
): Promise<{ resealed: number; unopened: string[] }> {
  const rows = await db.query<{ id: string; secret_sealed: string | null; previous_secret_sealed: string | null }>(
    `SELECT id, secret_sealed, previous_secret_sealed FROM notification_subscriptions
      WHERE left(secret_sealed, length($1)) <> $1 OR left(previous_secret_sealed, length($1)) <> $1 LIMIT $2`,
    [current, limit],
  );
  let resealed = 0;
  const unopened: string[] = [];
  for (const r of rows) {
    const again = (sealed: string | null) => (sealed === null || sealed.startsWith(current) ? sealed : reseal(String(r.id), sealed));
    let next: [string | null, string | null];
    try {
      next = [again(r.secret_sealed), again(r.previous_secret_sealed)];
    } catch {
      unopened.push(String(r.id));
      continue;
    }
    // only if no rotation changed them meanwhile
    const done = await db.query(
      `UPDATE notification_subscriptions SET secret_sealed = $2, previous_secret_sealed = $3
        WHERE id = $1 AND secret_sealed IS NOT DISTINCT FROM $4 AND previous_secret_sealed IS NOT DISTINCT FROM $5 RETURNING id`,
      [r.id, next[0], next[1], r.secret_sealed, r.previous_secret_sealed],
    );
    resealed += done.length;
  }
  return { resealed, unopened };
}
