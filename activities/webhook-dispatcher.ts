// The webhook dispatcher: claims due deliveries from PostgreSQL in batches (first attempts and
// redeliveries), sends them concurrently, and records the outcomes in batches. A delivery that
// fails is handed to a retry workflow of its own, which owns the waits of the retry schedule
// (durable timers); a healthy receiver never costs a workflow. It runs as a long-lived activity of
// webhookDispatcherWorkflow: heartbeats let Temporal move it to another worker if this one dies, and
// the claim's lease lets another dispatcher take over what a dead one had claimed.
//
// Isolation: at most `perSubscription` requests in flight per subscription and `perBusiness` per
// business, and claims that take each business's oldest due deliveries in turn (store/deliveries.ts):
// a business's slow receivers (5 s timeouts) and redelivered backlog hold a bounded share of the
// dispatcher and never delay another business's deliveries, and a slow receiver never holds all of
// its own business's share.
import type { Logger } from 'pino';
import type { Db } from '../store/db.ts';
import { cancelDeliveries, claimDueDeliveries, recordAttempts, type AttemptRecord, type DeliveryTarget } from '../store/deliveries.ts';
import { attemptRecord, type WebhookSender } from './webhook-send.ts';
import { countAttempt, countHealthChanges } from './activity-metrics.ts';

export type DispatcherSettings = {
  /** Requests in flight at once, per dispatcher. */
  maxInFlight: number;
  /** Requests in flight at once to one subscription, per dispatcher. */
  perSubscription: number;
  /** Requests in flight at once for one business (all its subscriptions), per dispatcher. */
  perBusiness: number;
  /** How long a claim holds (longer than an attempt's 5 s timeout plus recording). */
  leaseMs: number;
  /** Pause between claims when nothing was due. */
  pollMs: number;
};

export type DispatcherDeps = {
  db: Db;
  log: Logger;
  send: WebhookSender;
  settings: DispatcherSettings;
  /** How long a subscription fails continuously before it is disabled (WEBHOOK_DISABLE_AFTER_MS). */
  disableAfterMs: number;
  /** Starts the retry workflows of deliveries whose attempt failed (idempotent; failures are logged, the reconciler catches up). */
  handOff(deliveries: { deliveryId: string; run: number }[]): Promise<void>;
};

export type DispatchStats = { claimed: number; delivered: number; retrying: number; failed: number; canceled: number; held: number };

const CLAIM_BATCH = 200;

export function createWebhookDispatcher(deps: DispatcherDeps) {
  const { db, log, send, settings } = deps;

  /**
   * Dispatches until `signal` aborts or `runForMs` passes, then finishes what it has in flight and
   * records it. `heartbeat` is called on every turn of the loop.
   */
  async function run(options: { signal: AbortSignal; runForMs: number; heartbeat(): void }): Promise<DispatchStats> {
    const stats: DispatchStats = { claimed: 0, delivered: 0, retrying: 0, failed: 0, canceled: 0, held: 0 };
    const stopAt = Date.now() + options.runForMs;
    const bySubscription = new Map<string, number>();
    const byBusiness = new Map<string, number>();
    const up = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    const down = (m: Map<string, number>, k: string) => {
      const n = m.get(k)! - 1;
      if (n === 0) m.delete(k);
      else m.set(k, n);
    };
    let inFlight = 0;
    const results: { target: DeliveryTarget; record: AttemptRecord }[] = [];
    const gone: string[] = [];
    const handOffs = new Set<Promise<void>>();
    let wake = () => {};
    const nap = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    const onAbort = () => wake();
    options.signal.addEventListener('abort', onAbort);

    const launch = (target: DeliveryTarget) => {
      if (target.url === null) {
        gone.push(target.deliveryId); // the subscription was deleted
        return;
      }
      inFlight++;
      up(bySubscription, target.subscriptionId);
      up(byBusiness, target.businessId);
      void send({ eventId: target.eventId, body: target.body, url: target.url })
        .then((result) => {
          if (result.detail) log.debug({ deliveryId: target.deliveryId, detail: result.detail }, 'webhook attempt failed');
          results.push({ target, record: attemptRecord(target, result) });
        })
        .catch((err) => log.error({ err, deliveryId: target.deliveryId }, 'webhook attempt crashed; the claim expires and it is attempted again'))
        .finally(() => {
          inFlight--;
          down(bySubscription, target.subscriptionId);
          down(byBusiness, target.businessId);
          wake();
        });
    };

    /** Records every finished attempt in one transaction, then hands failures to retry workflows. */
    const flush = async () => {
      if (gone.length) {
        const ids = gone.splice(0);
        await cancelDeliveries(db, ids).catch((err) => {
          gone.push(...ids);
          throw err;
        });
        stats.canceled += ids.length;
      }
      if (results.length === 0) return;
      const batch = results.splice(0);
      let recorded;
      try {
        recorded = await recordAttempts(
          db,
          batch.map((r) => r.record),
          { disableAfterMs: deps.disableAfterMs },
        );
      } catch (err) {
        results.unshift(...batch);
        throw err;
      }
      countHealthChanges(recorded.healthChanges);
      const waiting = [];
      for (const { target, record } of batch) {
        countAttempt(record.next.status, target.createdAt);
        if (record.next.status === 'delivered') stats.delivered++;
        else if (record.next.status === 'failed') stats.failed++;
        else if (recorded.held.has(target.deliveryId)) stats.held++;
        else if (recorded.superseded.has(target.deliveryId))
          continue; // a later run owns it
        else {
          stats.retrying++;
          waiting.push({ deliveryId: target.deliveryId, run: target.run });
        }
      }
      if (waiting.length) {
        const p: Promise<void> = deps.handOff(waiting).finally(() => handOffs.delete(p));
        handOffs.add(p);
      }
    };

    let failing = 0;
    try {
      while (!options.signal.aborted && Date.now() < stopAt) {
        options.heartbeat();
        try {
          await flush();
          const room = settings.maxInFlight - inFlight;
          let claimed: DeliveryTarget[] = [];
          if (room > 0) {
            claimed = await claimDueDeliveries(db, {
              limit: Math.min(room, CLAIM_BATCH),
              leaseMs: settings.leaseMs,
              perSubscription: settings.perSubscription,
              perBusiness: settings.perBusiness,
              inFlight: { bySubscription, byBusiness },
            });
            stats.claimed += claimed.length;
            for (const target of claimed) launch(target);
          }
          failing = 0;
          if (claimed.length === CLAIM_BATCH && room > CLAIM_BATCH) continue; // more may be due at once
          if (results.length === 0) await nap(settings.pollMs); // a finished attempt wakes us early
        } catch (err) {
          // the database is unavailable: keep what is in hand, try again shortly
          if (failing++ % 20 === 0) log.warn({ err }, 'webhook dispatcher: database unavailable; retrying');
          await nap(Math.min(5000, 250 * failing));
        }
      }
    } finally {
      options.signal.removeEventListener('abort', onAbort);
      // finish what is in flight and record it (each attempt ends within its 5 s timeout)
      while (inFlight > 0) await nap(50);
      for (let tries = 0; results.length + gone.length > 0; tries++) {
        try {
          await flush();
        } catch (err) {
          if (tries >= 20) {
            log.error({ err, unrecorded: results.length }, 'webhook dispatcher stopping with attempts unrecorded; their claims expire and they are sent again');
            break;
          }
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      await Promise.allSettled([...handOffs]);
    }
    return stats;
  }

  return { run };
}
