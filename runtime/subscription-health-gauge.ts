// The webhook subscriptions by health (healthy, failing, disabled), counted in PostgreSQL when the
// API's /metrics is read: the fleet's count, the same from every API process. Alert on
// `vouch_webhook_subscriptions{health="disabled"} > 0` (a client's endpoint is turned off) and watch
// `failing`; the workers count the changes (vouch_webhook_subscription_health_changes_total).
import { Gauge } from 'prom-client';
import { SUBSCRIPTION_HEALTH_STATES } from '../domain/webhooks.ts';
import type { Queryable } from '../store/db.ts';
import { subscriptionHealthCounts } from '../store/subscription-health.ts';

const gauge = new Gauge({
  name: 'vouch_webhook_subscriptions',
  help: 'Webhook subscriptions, by health (healthy, failing, disabled), across the fleet',
  labelNames: ['health'] as const,
});

/** Counts them now; when the database does not answer, the gauge keeps its last values and says so in the log. */
export async function refreshSubscriptionHealthGauge(db: Queryable, onError: (err: unknown) => void): Promise<void> {
  try {
    const counts = await subscriptionHealthCounts(db);
    for (const health of SUBSCRIPTION_HEALTH_STATES) gauge.set({ health }, counts[health]);
  } catch (err) {
    onError(err);
  }
}
