// One synchronous import: the same steps as a batch row, with short retries because a caller is
// waiting. The workflow and its database steps run on the sync task queue (workers of their own, no
// batch backlog ahead); its provider calls run on the provider queue with the batches, inside the one
// fleet-wide provider limit, in its business's sync lane: one turn from the provider however large a
// batch runs beside it (contract/provider-queue.ts).
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { GeneralActivities, ProviderActivities } from '../activities/index.ts';
import { providerPriority } from '../contract/provider-queue.ts';
import { BUG_FAILURE, RECOVER_LOOKUP_MAX_ATTEMPTS } from '../contract/share-record.ts';
import { type SyncImportInput, type SyncImportResult } from '../contract/sync-import.ts';
import { shareRecord, type ShareSteps } from './share-record.ts';
import { setVouchStatus } from './status.ts';

const general = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '2 seconds', maximumAttempts: 5 },
});

export async function syncImportWorkflow(input: SyncImportInput): Promise<SyncImportResult> {
  const onProviderQueue = {
    taskQueue: input.providerTaskQueue,
    priority: providerPriority('sync', input.businessId),
    startToCloseTimeout: '15 seconds',
  } as const;
  const provider = proxyActivities<ProviderActivities>({
    ...onProviderQueue,
    retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '2 seconds', maximumAttempts: 3 },
  });
  const lookup = proxyActivities<ProviderActivities>({
    ...onProviderQueue,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: RECOVER_LOOKUP_MAX_ATTEMPTS },
  });
  const steps: ShareSteps = { failShare: general.failShare, processShare: provider.processShare, recoverShare: lookup.recoverShare };
  const result = await shareRecord({ kind: 'sync', requestId: input.requestId }, steps);
  setVouchStatus(result.outcome === 'succeeded' ? 'completed' : 'failed');
  if (result.outcome === 'failed') return { outcome: 'failed', category: result.category };
  if (result.outcome === 'skipped') throw ApplicationFailure.nonRetryable('a sync import is never skipped', BUG_FAILURE);
  return { outcome: 'succeeded' };
}
