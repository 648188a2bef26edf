// Names and message types shared by the API, the worker and the workflows. Node-free: workflows
// import it too.

/** The Temporal Schedule that runs housekeeping; created or updated when a worker starts. */
export const HOUSEKEEPING_SCHEDULE_ID = 'vouch-housekeeping';
export const HOUSEKEEPING_INTERVAL = '1 minute';

/** One workflow per run of a batch: the upload's, then one per retry of its failed rows. */
export const batchWorkflowId = (batchId: string, run = 1) => (run === 1 ? `batch-import-${batchId}` : `batch-import-${batchId}-retry-${run - 1}`);
export const syncWorkflowId = (requestId: string) => `sync-import-${requestId}`;

export type BatchImportInput = {
  batchId: string;
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

export type SyncImportInput = { requestId: string };

export type SyncImportResult = { outcome: 'succeeded' } | { outcome: 'failed'; category: string };

/** ApplicationFailure types of provider failures are this prefix and the kind (provider/errors.ts). */
export const PROVIDER_FAILURE_PREFIX = 'Provider.';

/** ApplicationFailure type of a failure that stops a whole run (our provider credentials refused). */
export const RUN_LEVEL_FAILURE = 'RunLevel';

/** One workflow per delivery run: the first, then one per redelivery. */
export const webhookWorkflowId = (deliveryId: string, run = 1) => (run === 1 ? `webhook-delivery-${deliveryId}` : `webhook-delivery-${deliveryId}-redelivery-${run - 1}`);

export type WebhookDeliveryInput = { deliveryId: string };
