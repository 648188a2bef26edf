// One batch import: every pending row of the batch, a bounded number at a time, each through
// shareRecord, on the batch engine (batch-engine.ts: pages, continue-as-new, cancel, failure). Only
// refused credentials fail the batch; a row whose provider calls keep failing fails alone.
import { ApplicationFailure, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { GeneralActivities, ProviderActivities } from '../activities/index.ts';
import { type BatchImportInput } from '../contract/batch-import.ts';
import { providerPriority } from '../contract/provider-queue.ts';
import { RECOVER_LOOKUP_MAX_ATTEMPTS, RUN_LEVEL_FAILURE } from '../contract/share-record.ts';
import { shareRecord, type ShareSteps } from './share-record.ts';
import { inPool } from '../lib/pool.ts';
import { runBatchPage } from './batch-engine.ts';

// Database steps take milliseconds; a short timeout lets a crashed worker's tasks move on quickly.
const general = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function batchImportWorkflow(input: BatchImportInput): Promise<{ status: 'completed' }> {
  const onProviderQueue = {
    taskQueue: input.providerTaskQueue,
    priority: providerPriority('batch', input.businessId), // the business's batch lane: every waiting lane in turn
    startToCloseTimeout: '20 seconds', // above the provider client's own 10 s request timeout
  } as const;
  const provider = proxyActivities<ProviderActivities>({
    ...onProviderQueue,
    retry: {
      initialInterval: input.providerRetry.initialIntervalMs,
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: input.providerRetry.maximumAttempts,
    },
  });
  const lookup = proxyActivities<ProviderActivities>({
    ...onProviderQueue,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: RECOVER_LOOKUP_MAX_ATTEMPTS },
  });
  // Activity proxies enumerate nothing, so each step is named (no spreading).
  const steps: ShareSteps = { failShare: general.failShare, processShare: provider.processShare, recoverShare: lookup.recoverShare };
  // the UI's "current details" (the first run also has a static summary; continue-as-new cannot carry one)
  const page = await runBatchPage(input, {
    details: `Batch import ${input.batchId}: ${input.cursor === undefined ? 'first page' : `rows after ${input.cursor}`}`,
    start: () => general.startBatch(input.batchId),
    nextRows: (after, limit) => general.nextRows(input.batchId, after, limit),
    handle: (rows) => inPool(rows, input.concurrency, (rowNumber) => shareRecord({ kind: 'batch', batchId: input.batchId, rowNumber }, steps)),
    finish: () => general.finishBatch(input.batchId),
    // the provider refused our credentials: no row can succeed (a row's own failure fails that row only)
    failsBatch: (err) => (err instanceof ApplicationFailure && err.type === RUN_LEVEL_FAILURE ? err.message : undefined),
    fail: (reason) => general.failBatch(input.batchId, reason),
  });
  return 'next' in page ? await continueAsNew<typeof batchImportWorkflow>({ ...input, cursor: page.next }) : page;
}
