// The requirement-batch workflow (workflows/requirement-batch.ts): one run per run of a batch of
// requirement submissions.

/** One workflow per run of a batch: the upload's, then one per retry of its failed records. */
export const requirementBatchWorkflowId = (batchId: string, run = 1) =>
  run === 1 ? `requirement-batch-${batchId}` : `requirement-batch-${batchId}-retry-${run - 1}`;

export type RequirementBatchInput = {
  batchId: string;
  businessId: string;
  /** Records per run before continuing as new. */
  pageSize: number;
  /** Records per step (one activity handles them, each in its own transaction). */
  chunkSize: number;
  /** Steps in flight at once. */
  concurrency: number;
  /** Last row number handled by earlier runs of this chain (continue-as-new). */
  cursor?: number;
};
