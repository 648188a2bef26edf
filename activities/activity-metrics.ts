// Metrics of the work activities do (prom-client's default registry; served at /metrics): shared
// records (batch rows and sync imports) as they finish, by outcome and failure category, counted
// once per record; webhook attempts by outcome; and the lag from a delivery's creation (its
// event's decision) to its successful attempt.
import { Counter, Histogram } from 'prom-client';
import type { ShareRef } from '../contract/share-record.ts';
import type { HealthChange } from '../store/subscription-health.ts';

const records = new Counter({
  name: 'vouch_records_total',
  help: 'Shared records finished (batch rows and sync imports), by kind, outcome and failure category',
  labelNames: ['kind', 'outcome', 'category'] as const,
});
const attempts = new Counter({
  name: 'vouch_webhook_attempts_total',
  help: 'Webhook delivery attempts, by outcome (delivered, retrying, failed)',
  labelNames: ['outcome'] as const,
});
const lag = new Histogram({
  name: 'vouch_webhook_delivery_lag_seconds',
  help: "Time from a delivery's creation (its event) to its successful attempt",
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 1800, 7200, 36_000, 86_400, 259_200],
});

const healthChanges = new Counter({
  name: 'vouch_webhook_subscription_health_changes_total',
  help: "Webhook subscriptions' health changes, by the state entered (healthy, failing, disabled)",
  labelNames: ['to'] as const,
});
const resumed = new Counter({
  name: 'vouch_webhook_backlog_resumed_total',
  help: 'Deliveries handed back to the dispatcher at once because their subscription answered again',
});

export function countHealthChanges(changes: readonly HealthChange[]): void {
  for (const c of changes) {
    healthChanges.inc({ to: c.to });
    if (c.to === 'healthy') resumed.inc(c.deliveries);
  }
}

export function countRecord(ref: ShareRef, outcome: 'succeeded' | 'failed', category = ''): void {
  records.inc({ kind: ref.kind, outcome, category });
}

export function countAttempt(outcome: 'delivered' | 'pending' | 'failed', deliveryCreatedAt: string): void {
  attempts.inc({ outcome: outcome === 'pending' ? 'retrying' : outcome });
  if (outcome === 'delivered') lag.observe(Math.max(0, (Date.now() - Date.parse(deliveryCreatedAt)) / 1000));
}
