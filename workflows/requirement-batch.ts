// One batch of requirement submissions: its pending records a page at a time, a few steps in
// flight, each step a chunk of records handled one transaction each (activities/requirement-batch.ts).
// Each page ends with continue-as-new, so a 5,000-record batch keeps every history small. Counters
// and per-record results live in PostgreSQL, where the status endpoint reads them. A step that keeps
// failing (its retries spent) fails the run: the batch is marked failed and the records it never
// reached stay pending for POST …/retry.
import { ActivityFailure, CancellationScope, continueAsNew, isCancellation, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { GeneralActivities } from '../activities/index.ts';
import type { RequirementBatchInput } from '../contract/requirement-batch.ts';
import { inPool } from '../lib/pool.ts';
import { setVouchStatus } from './status.ts';

const general = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

// a chunk's transactions take milliseconds each; it heartbeats before each, so a crashed worker's step moves on within seconds
const records = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export async function requirementBatchWorkflow(input: RequirementBatchInput): Promise<{ status: 'completed' }> {
  setCurrentDetails(`Requirement batch ${input.batchId}: ${input.cursor === undefined ? 'first page' : `records after line ${input.cursor}`}`);
  try {
    if (input.cursor === undefined) {
      await general.startRequirementBatch(input.batchId);
      setVouchStatus('in_progress');
    }
    const rows = await general.nextRequirementRows(input.batchId, input.cursor ?? 0, input.pageSize);
    if (rows.length > 0) {
      const chunks: number[][] = [];
      for (let i = 0; i < rows.length; i += input.chunkSize) chunks.push(rows.slice(i, i + input.chunkSize));
      await inPool(chunks, input.concurrency, (chunk) =>
        records.handleRequirementRecords.executeWithOptions({ summary: `Lines ${chunk[0]}–${chunk.at(-1)}` }, [input.batchId, chunk]),
      );
      return await continueAsNew<typeof requirementBatchWorkflow>({ ...input, cursor: rows.at(-1)! });
    }
    await general.finishRequirementBatch(input.batchId);
    setVouchStatus('completed');
    return { status: 'completed' };
  } catch (err) {
    if (isCancellation(err)) {
      setVouchStatus('canceled');
      throw err; // the API marked the batch canceled before cancelling us
    }
    if (err instanceof ActivityFailure) {
      const reason = `a step failed after its retries: ${err.cause?.message ?? err.message}`.slice(0, 500);
      await CancellationScope.nonCancellable(() => general.failRequirementBatch(input.batchId, reason));
      setVouchStatus('failed');
    }
    throw err;
  }
}
