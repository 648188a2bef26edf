// Periodic work, run by a Temporal Schedule so that exactly one run happens per interval however
// many API and worker processes there are, and a missed run shows in the UI: clean-up of short-lived
// rows, and the reconciler (workflows that must exist and do not: the webhook dispatcher, retry
// workflows of overdue deliveries, workflows of unfinished batches, KYB submissions that lost their
// wake), file-store bytes that no row names, reminders of waiting submissions whose deadline is
// near, and the catalog's new features announced. Each step runs even if another failed.
import { deprecatePatch, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { HousekeepingInput } from '../contract/housekeeping.ts';
import { PATCHES } from '../contract/patches.ts';
import type { GeneralActivities } from '../activities/index.ts';

const a = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

export type HousekeepingResult = {
  rateLimitWindowsPurged: number;
  deliveriesRestarted: number;
  batchesRestarted: number;
  kybSubmissionsWoken?: number;
  strayFileBytesRemoved?: number;
  remindersSent?: number;
  featuresAnnounced?: number;
  retentionRunsStarted?: number;
  requirementBatchesRestarted?: number;
  failedSteps: string[];
};

/**
 * `passes` passes, `everyMs` apart (the schedule: 60 a minute apart, one run an hour); without input
 * one pass, as runs started before the hourly schedule did.
 */
export async function housekeepingWorkflow(input?: HousekeepingInput): Promise<HousekeepingResult> {
  const passes = input?.passes ?? 1;
  const total: HousekeepingResult = { rateLimitWindowsPurged: 0, deliveriesRestarted: 0, batchesRestarted: 0, failedSteps: [] };
  for (let i = 0; i < passes; i++) {
    if (i > 0) await sleep(input!.everyMs);
    const r = await pass();
    total.rateLimitWindowsPurged += r.rateLimitWindowsPurged;
    total.deliveriesRestarted += r.deliveriesRestarted;
    total.batchesRestarted += r.batchesRestarted;
    if (r.kybSubmissionsWoken !== undefined) total.kybSubmissionsWoken = (total.kybSubmissionsWoken ?? 0) + r.kybSubmissionsWoken;
    if (r.strayFileBytesRemoved !== undefined) total.strayFileBytesRemoved = (total.strayFileBytesRemoved ?? 0) + r.strayFileBytesRemoved;
    if (r.remindersSent !== undefined) total.remindersSent = (total.remindersSent ?? 0) + r.remindersSent;
    if (r.featuresAnnounced !== undefined) total.featuresAnnounced = (total.featuresAnnounced ?? 0) + r.featuresAnnounced;
    if (r.requirementBatchesRestarted !== undefined)
      total.requirementBatchesRestarted = (total.requirementBatchesRestarted ?? 0) + r.requirementBatchesRestarted;
    if (r.retentionRunsStarted !== undefined) total.retentionRunsStarted = (total.retentionRunsStarted ?? 0) + r.retentionRunsStarted;
    for (const s of r.failedSteps) if (!total.failedSteps.includes(s)) total.failedSteps.push(s);
  }
  return total;
}

async function pass(): Promise<HousekeepingResult> {
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
  // added with universal KYB and with complete deletion (release 1.0.1; their patches removed in 1.1.0)
  const kybSubmissionsWoken = await step('reconcileKybSubmissions', () => a.reconcileKybSubmissions(), 0);
  const strayFileBytesRemoved = await step('removeStrayFileBytes', () => a.removeStrayFileBytes(), 0);
  // added with the lifecycle events (release 1.0.2): deprecated patch, contract/patches.ts
  deprecatePatch(PATCHES.lifecycleEvents.id);
  const remindersSent = await step('sendReminders', () => a.sendReminders(), 0);
  const featuresAnnounced = await step('announceNewFeatures', () => a.announceNewFeatures(), 0);
  // added with retention (release 1.1.0): runs recorded before it replay without the step
  const retentionRunsStarted = patched(PATCHES.reconcileRetention.id) ? await step('reconcileRetention', () => a.reconcileRetention(), 0) : undefined;
  // added with batches of requirement submissions (interface 1.1.0)
  const requirementBatchesRestarted = patched(PATCHES.reconcileRequirementBatches.id)
    ? await step('reconcileRequirementBatches', () => a.reconcileRequirementBatches(), 0)
    : undefined;
  return {
    rateLimitWindowsPurged,
    deliveriesRestarted,
    batchesRestarted,
    kybSubmissionsWoken,
    strayFileBytesRemoved,
    remindersSent,
    featuresAnnounced,
    ...(retentionRunsStarted === undefined ? {} : { retentionRunsStarted }),
    ...(requirementBatchesRestarted === undefined ? {} : { requirementBatchesRestarted }),
    failedSteps,
  };
}
