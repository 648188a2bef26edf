// Keeps the webhook dispatcher running: `dispatchers` long-lived activities that claim due
// deliveries from PostgreSQL and send them (activities/webhook-dispatcher.ts). Each returns after
// `runForMs` and is started again; heartbeats let Temporal move one to another worker when its
// worker dies. Continue-as-new keeps the history short. One per webhook task queue, started by every
// worker and by the reconciler (idempotently), so it is always there.
import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/index.ts';
import type { WebhookDispatcherInput } from '../contract/webhook-dispatcher.ts';

const ROUNDS_PER_RUN = 50;

export async function webhookDispatcherWorkflow(input: WebhookDispatcherInput): Promise<never> {
  const { runWebhookDispatcher } = proxyActivities<WebhookActivities>({
    startToCloseTimeout: input.runForMs + 5 * 60_000,
    heartbeatTimeout: '30 seconds',
    // no attempt limit: a dispatcher must always come back (after a crash, a database outage, a deploy)
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds' },
  });
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    await Promise.all(Array.from({ length: input.dispatchers }, () => runWebhookDispatcher(input.runForMs)));
  }
  return continueAsNew<typeof webhookDispatcherWorkflow>(input);
}
