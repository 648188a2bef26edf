// Batch-level steps: status transitions and paging through the rows still to do.
import type { Db } from '../store/db.ts';
import { markBatchCompleted, markBatchFailed, markBatchStarted, pendingRowNumbers } from '../store/batches.ts';

export function createBatchActivities(deps: { db: Db }) {
  const { db } = deps;
  return {
    startBatch: (batchId: string) => markBatchStarted(db, batchId),
    nextRows: (batchId: string, afterRow: number, limit: number) => pendingRowNumbers(db, batchId, afterRow, limit),
    finishBatch: (batchId: string) => markBatchCompleted(db, batchId),
    failBatch: (batchId: string, reason: string) => markBatchFailed(db, batchId, reason),
  };
}
