// One batch of requirement submissions, on the batch engine (batch-engine.ts: pages, continue-as-new,
// cancel, failure): a few steps in flight, each step a chunk of records handled one transaction each
// (activities/requirement-batch.ts). A step that keeps failing (its retries spent) fails the batch:
// it is marked failed and the records it never reached stay pending for POST …/retry.
import { ActivityFailure, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { GeneralActivities } from '../activities/index.ts';
import type { RequirementBatchInput } from '../contract/requirement-batch.ts';
import { inPool } from '../lib/pool.ts';
import { runBatchPage } from './batch-engine.ts';

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
  const page = await runBatchPage(input, {
    details: `Requirement batch ${input.batchId}: ${input.cursor === undefined ? 'first page' : `records after line ${input.cursor}`}`,
    start: () => general.startRequirementBatch(input.batchId),
    nextRows: (after, limit) => general.nextRequirementRows(input.batchId, after, limit),
    async handle(rows) {
      const chunks: number[][] = [];
      for (let i = 0; i < rows.length; i += input.chunkSize) chunks.push(rows.slice(i, i + input.chunkSize));
      await inPool(chunks, input.concurrency, (chunk) =>
        records.handleRequirementRecords.executeWithOptions({ summary: `Lines ${chunk[0]}–${chunk.at(-1)}` }, [input.batchId, chunk]),
      );
    },
    finish: () => general.finishRequirementBatch(input.batchId),
    // a step whose retries are spent (its records stay pending for POST …/retry)
    failsBatch: (err) => (err instanceof ActivityFailure ? `a step failed after its retries: ${err.cause?.message ?? err.message}`.slice(0, 500) : undefined),
    fail: (reason) => general.failRequirementBatch(input.batchId, reason),
  });
  return 'next' in page ? await continueAsNew<typeof requirementBatchWorkflow>({ ...input, cursor: page.next }) : page;
}
