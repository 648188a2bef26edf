// One synchronous import: the same steps as a batch row, on the interactive task queue (its own
// workers, no batch backlog ahead of it), with short retries because a caller is waiting.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { GeneralActivities, ProviderActivities } from '../activities/index.ts';
import type { SyncImportInput, SyncImportResult } from './definitions.ts';
import { shareRecord, type ShareSteps } from './share-record.ts';

const general = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '2 seconds', maximumAttempts: 5 },
});
const provider = proxyActivities<ProviderActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '2 seconds', maximumAttempts: 3 },
});

export async function syncImportWorkflow(input: SyncImportInput): Promise<SyncImportResult> {
  const steps: ShareSteps = { failShare: general.failShare, processShare: provider.processShare, recoverShare: provider.recoverShare };
  const result = await shareRecord({ kind: 'sync', requestId: input.requestId }, steps);
  if (result.outcome === 'failed') return { outcome: 'failed', category: result.category };
  if (result.outcome === 'done') throw ApplicationFailure.nonRetryable('sync import record was already finished', 'AlreadyDone');
  return { outcome: 'succeeded' };
}
