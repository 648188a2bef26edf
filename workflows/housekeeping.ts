// Periodic work, run by a Temporal Schedule so that exactly one run happens per interval however
// many API and worker processes there are, and a missed run shows in the UI: clean-up of short-lived
// rows, and the reconciler (workflows that must exist and do not: the webhook dispatcher, retry
// workflows of overdue deliveries, workflows of unfinished batches). Each step runs even if another
// failed.
import { proxyActivities } from '@temporalio/workflow';
import type { GeneralActivities } from '../activities/index.ts';

const a = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

export type HousekeepingResult = { rateLimitWindowsPurged: number; deliveriesRestarted: number; batchesRestarted: number; failedSteps: string[] };

export async function housekeepingWorkflow(): Promise<HousekeepingResult> {
  const failedSteps: string[] = [];
  const step = async <T>(name: string, fn: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await fn();
    } catch {
      failedSteps.push(name);
      return fallback;
    }
  };
  const rateLimitWindowsPurged = await step('purgeRateLimitWindows', () => a.purgeRateLimitWindows(), 0);
  await step('ensureWebhookDispatcher', () => a.ensureWebhookDispatcher(), undefined);
  const deliveriesRestarted = await step('reconcileDeliveries', () => a.reconcileDeliveries(), 0);
  const batchesRestarted = await step('reconcileBatches', () => a.reconcileBatches(), 0);
  return { rateLimitWindowsPurged, deliveriesRestarted, batchesRestarted, failedSteps };
}
