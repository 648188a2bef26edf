// One batch import: every pending row of the batch, a bounded number at a time, each through
// shareRecord. Rows come from PostgreSQL a page at a time and each page ends with continue-as-new,
// so a 5,000-row batch keeps every history small. Counters and per-row results live in PostgreSQL,
// where the status endpoint reads them during and after the run.
import { ApplicationFailure, CancellationScope, continueAsNew, isCancellation, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { GeneralActivities, ProviderActivities } from '../activities/index.ts';
import { type BatchImportInput } from '../contract/batch-import.ts';
import { providerPriority } from '../contract/provider-queue.ts';
import { RECOVER_LOOKUP_MAX_ATTEMPTS, RUN_LEVEL_FAILURE } from '../contract/share-record.ts';
import { shareRecord, type ShareSteps } from './share-record.ts';
import { inPool } from '../lib/pool.ts';
import { setVouchStatus } from './status.ts';

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
  setCurrentDetails(`Batch import ${input.batchId}: ${input.cursor === undefined ? 'first page' : `rows after ${input.cursor}`}`);
  try {
    if (input.cursor === undefined) {
      await general.startBatch(input.batchId);
      setVouchStatus('in_progress');
    }
    const rows = await general.nextRows(input.batchId, input.cursor ?? 0, input.pageSize);
    if (rows.length > 0) {
      await inPool(rows, input.concurrency, (rowNumber) => shareRecord({ kind: 'batch', batchId: input.batchId, rowNumber }, steps));
      return await continueAsNew<typeof batchImportWorkflow>({ ...input, cursor: rows.at(-1)! });
    }
    await general.finishBatch(input.batchId);
    setVouchStatus('completed');
    return { status: 'completed' };
  } catch (err) {
    if (isCancellation(err)) {
      setVouchStatus('canceled');
      throw err; // the API marked the batch canceled before cancelling us
    }
    if (err instanceof ApplicationFailure && err.type === RUN_LEVEL_FAILURE) {
      await CancellationScope.nonCancellable(() => general.failBatch(input.batchId, err.message));
      setVouchStatus('failed');
    }
    throw err;
  }
}
