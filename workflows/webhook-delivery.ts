// Delivers one event to one subscription: an attempt at once, then retries on the schedule of
// domain/webhooks.ts (about three days, with jitter) until a 2xx. Durable timers: a receiver down
// for days costs nothing while it waits. The same bytes, signed afresh, with the same eventId, on
// every attempt. Deleting the subscription cancels the workflow (and any attempt notices).
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/index.ts';
import { MAX_DELIVERY_ATTEMPTS, retryDelayMs } from '../domain/webhooks.ts';
import type { WebhookDeliveryInput } from './definitions.ts';

const { deliverWebhook, giveUpDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  // HTTP failures come back as values; these retries are for our own infrastructure only.
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<'delivered' | 'failed' | 'canceled'> {
  for (let attempt = 1; ; attempt++) {
    const result = await deliverWebhook(input.deliveryId, attempt);
    if (result.outcome !== 'failed') return result.outcome;
    if (attempt >= MAX_DELIVERY_ATTEMPTS) break;
    await sleep(retryDelayMs(attempt, Math.random())); // workflow Math.random is deterministic on replay
  }
  await giveUpDelivery(input.deliveryId);
  return 'failed';
}
