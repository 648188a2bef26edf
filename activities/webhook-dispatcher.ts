// The webhook dispatcher: claims due deliveries from PostgreSQL in batches (first attempts,
// redeliveries and retries whose slot has come), sends them concurrently, and records the outcomes
// in batches. A delivery that fails waits in PostgreSQL for its next slot (mode 'waiting'); each turn
// of the loop first promotes the waiting ones that are due, so a retry is claimed by the same fair
// rule as a first attempt and a receiver down for days costs no workflow, timer or memory while its
// deliveries wait. Every second it also probes failing subscriptions (store/subscription-health.ts
// probeFailingSubscriptions): one waiting delivery each, early, so a receiver back from an outage
// gets its backlog within about half a minute rather than at its next slot. It runs as a long-lived activity of webhookDispatcherWorkflow: heartbeats let
// Temporal move it to another worker if this one dies, and the claim's lease lets another
// dispatcher take over what a dead one had claimed.
//
// Isolation: at most `perSubscription` requests in flight per subscription and `perBusiness` per
// business, and claims that take each business's oldest due deliveries in turn (store/deliveries.ts):
// a business's slow or dead receivers (5 s timeouts, refused connections, a backlog of retries) hold
// a bounded share of the dispatcher and never delay another business's deliveries, and a slow
// receiver never holds all of its own business's share. A subscription whose last attempt failed
// gets at most FAILING_ATTEMPTS_PER_SECOND attempts a second from this dispatcher until one succeeds
// (the pace of a receiver that is down), so refusals that come back at once cost a few attempts a
// second, not all the dispatcher's CPU.
import type { Logger } from 'pino';
import type { Db } from '../store/db.ts';
import { cancelDeliveries, claimDueDeliveries, promoteDueDeliveries, recordAttempts, type AttemptRecord, type DeliveryTarget } from '../store/deliveries.ts';
import { probeFailingSubscriptions } from '../store/subscription-health.ts';
import { FAILING_ATTEMPTS_PER_SECOND } from '../domain/webhooks.ts';
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
};

export type DispatchStats = {
  claimed: number;
  delivered: number;
  /** attempts that failed and left their delivery waiting for its next slot */
  retrying: number;
  failed: number;
  canceled: number;
  held: number;
  /** waiting deliveries handed to the claim as their slot came */
  promoted: number;
  /** waiting deliveries sent early to probe a failing subscription */
  probed: number;
};

const CLAIM_BATCH = 200;
/** Waiting deliveries promoted at most per statement (about 12 ms; more follow at the next turn when it was full). */
const PROMOTE_BATCH = 500;
/** How often a dispatcher looks for waiting deliveries whose slot has come (a slot is kept to within this). */
const PROMOTE_EVERY_MS = 250;
/** How often a dispatcher looks for failing subscriptions due a probe (each is probed once per its own interval, fleet-wide). */
const PROBE_EVERY_MS = 1000;

export function createWebhookDispatcher(deps: DispatcherDeps) {
  const { db, log, send, settings } = deps;

  /**
   * Dispatches until `signal` aborts or `runForMs` passes, then finishes what it has in flight and
   * records it. `heartbeat` is called on every turn of the loop.
   */
  async function run(options: { signal: AbortSignal; runForMs: number; heartbeat(): void }): Promise<DispatchStats> {
    const stats: DispatchStats = { claimed: 0, delivered: 0, retrying: 0, failed: 0, canceled: 0, held: 0, promoted: 0, probed: 0 };
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
    // subscriptions whose last attempt here failed: attempts started in the current second, and when it began
    const paced = new Map<string, { second: number; started: number }>();
    const secondNow = () => Math.floor(Date.now() / 1000);
    /** What the claim sees in flight: a paced subscription's spent second counts as full (no more room than its pace leaves). */
    const inFlightForClaim = (): Map<string, number> => {
      if (paced.size === 0) return bySubscription;
      const seen = new Map(bySubscription);
      const now = secondNow();
      for (const [id, p] of paced) {
        const left = p.second === now ? Math.max(0, FAILING_ATTEMPTS_PER_SECOND - p.started) : FAILING_ATTEMPTS_PER_SECOND;
        seen.set(id, Math.max(seen.get(id) ?? 0, settings.perSubscription - left));
      }
      return seen;
    };
    const results: { target: DeliveryTarget; record: AttemptRecord }[] = [];
    const gone: string[] = [];
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
      const pace = paced.get(target.subscriptionId);
      if (pace) {
        const now = secondNow();
        if (pace.second !== now) Object.assign(pace, { second: now, started: 0 });
        pace.started++;
      }
      void send({ ...target, url: target.url })
        .then((result) => {
          if (result.error === null) paced.delete(target.subscriptionId);
          else if (!paced.has(target.subscriptionId)) {
            if (paced.size >= 10_000) paced.delete(paced.keys().next().value!); // bounded: the oldest forgotten
            paced.set(target.subscriptionId, { second: secondNow(), started: 0 });
          }
          if (result.secretError)
            log.error({ deliveryId: target.deliveryId, subscriptionId: target.subscriptionId, err: result.secretError }, 'sent without the v1 signature');
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

    /** Records every finished attempt in one transaction (a failure waits for its next slot there). */
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
      for (const { target, record } of batch) {
        countAttempt(record.next.status, target.createdAt);
        if (record.next.status === 'delivered') stats.delivered++;
        else if (record.next.status === 'failed') stats.failed++;
        else if (recorded.held.has(target.deliveryId)) stats.held++;
        else if (!recorded.superseded.has(target.deliveryId)) stats.retrying++; // (a superseded one: a later run owns it)
      }
    };

    let failing = 0;
    let promoteAt = 0;
    let probeAt = 0;
    try {
      while (!options.signal.aborted && Date.now() < stopAt) {
        options.heartbeat();
        try {
          await flush();
          if (Date.now() >= probeAt) {
            stats.probed += await probeFailingSubscriptions(db);
            probeAt = Date.now() + PROBE_EVERY_MS;
          }
          if (Date.now() >= promoteAt) {
            const promoted = await promoteDueDeliveries(db, PROMOTE_BATCH);
            stats.promoted += promoted;
            promoteAt = promoted === PROMOTE_BATCH ? 0 : Date.now() + PROMOTE_EVERY_MS;
          }
          const room = settings.maxInFlight - inFlight;
          let claimed: DeliveryTarget[] = [];
          if (room > 0) {
            claimed = await claimDueDeliveries(db, {
              limit: Math.min(room, CLAIM_BATCH),
              leaseMs: settings.leaseMs,
              perSubscription: settings.perSubscription,
              perBusiness: settings.perBusiness,
              inFlight: { bySubscription: inFlightForClaim(), byBusiness },
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
    }
    return stats;
  }

  return { run };
}
