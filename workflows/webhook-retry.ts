// Retired (issue 38): a delivery whose attempt failed now waits in PostgreSQL for its next slot and
// the dispatchers take it up (store/deliveries.ts), so a dead receiver costs Temporal nothing per
// delivery. Nothing starts this workflow any more; it stays registered, unchanged, so that runs an
// earlier release started move to this release (auto-upgrade) and end at their next step — their
// delivery is no longer theirs (mode 'waiting' since migration 031), so they send nothing. Remove it
// once no release that started it runs anywhere (docs/architecture.md, "Releasing workflow code").
//
// What it did: a delivery whose attempt failed waited here for its next attempts, on the schedule of
// domain/webhooks.ts (about three days with jitter): durable timers, so a receiver down for days
// cost nothing while it waited and workers or the Temporal server could restart meanwhile. The waits
// come from the attempt activity (it computes them, jitter included, and stores the due time the
// reconciler watches), so this code has no clock or randomness of its own. The same bytes, signed
// afresh, with the same eventId, on every attempt; a deleted subscription ends it at the next attempt.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/index.ts';
import type { WebhookRetryInput } from '../contract/webhook-retry.ts';
import { setVouchStatus } from './status.ts';

const { deliveryDueIn, attemptDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  // HTTP failures come back as values; these retries are for our own infrastructure (database
  // down, worker lost), with no attempt limit: giving up here would leave the delivery pending.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function webhookRetryWorkflow(input: WebhookRetryInput): Promise<string> {
  let wait = await deliveryDueIn(input.deliveryId);
  let status = 'nothing to do';
  while (wait !== null) {
    if (wait > 0) await sleep(wait);
    const attempt = await attemptDelivery(input.deliveryId);
    status = attempt.status;
    wait = attempt.nextDelayMs;
  }
  if (status === 'delivered' || status === 'failed' || status === 'canceled') setVouchStatus(status);
  return status;
}
