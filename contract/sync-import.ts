// The sync-import workflow (workflows/sync-import.ts): one per sync request; the API waits for its result.
import type { ImportErrorCategory } from '../domain/import-errors.ts';

export const syncWorkflowId = (requestId: string) => `sync-import-${requestId}`;

export type SyncImportInput = {
  requestId: string;
  /** The calling business: its provider calls' fairness key (absent in runs started before it was added). */
  businessId?: string;
  /** The provider queue, shared with batches (its calls in the business's sync lane: contract/provider-queue.ts). */
  providerTaskQueue: string;
};

export type SyncImportResult = { outcome: 'succeeded' } | { outcome: 'failed'; category: ImportErrorCategory };
