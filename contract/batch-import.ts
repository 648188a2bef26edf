// The batch-import workflow (workflows/batch-import.ts): one run per run of a batch.

/** One workflow per run of a batch: the upload's, then one per retry of its failed rows. */
export const batchWorkflowId = (batchId: string, run = 1) => (run === 1 ? `batch-import-${batchId}` : `batch-import-${batchId}-retry-${run - 1}`);

export type BatchImportInput = {
  batchId: string;
  /** The uploading business: its provider calls' fairness key (absent in runs started before it was added). */
  businessId?: string;
  /** The rate-limited queue of provider activities (workflows cannot read configuration). */
  providerTaskQueue: string;
  /** Records in flight at once. */
  concurrency: number;
  /** Rows per run before continuing as new. */
  pageSize: number;
  /** Retry of each provider call: attempts, and the first backoff (doubling up to a minute). */
  providerRetry: { maximumAttempts: number; initialIntervalMs: number };
  /** Last row number handled by earlier runs of this chain (continue-as-new). */
  cursor?: number;
};
