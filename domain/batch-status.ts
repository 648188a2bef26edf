// A batch's states (interface 3.1, written in lower case) and its status record (interface 2.3),
// built from a batch and its failed rows (what the status and cancel endpoints answer).
import { pageMeta, type Page } from './pagination.ts';

export type BatchStatus = 'pending' | 'in_progress' | 'completed' | 'failed' | 'canceled';
export const TERMINAL: readonly BatchStatus[] = ['completed', 'failed', 'canceled'];

export type BatchView = {
  id: string;
  status: BatchStatus;
  totalRecords: number;
  successfulRecords: number;
  failedRecords: number;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  canceledAt: string | null;
};

export type FailedRowView = {
  rowNumber: number;
  externalId: string;
  shareToken: string;
  cardProcessorPublicToken: string | null;
  category: string;
  message: string;
  retryable: boolean;
};

/** The status record (2.3); with `page`, failed holds that page of the errors and `meta` says which. */
export function batchStatusRecord(batch: BatchView, failed: readonly FailedRowView[], page: Page | null = null) {
  const errors = failed.map((f) => ({
    rowNumber: f.rowNumber,
    error: f.message,
    errorDetail: { category: f.category, message: f.message, retryable: f.retryable },
    entityData: {
      externalId: f.externalId,
      shareToken: f.shareToken,
      ...(f.cardProcessorPublicToken ? { cardProcessorPublicToken: f.cardProcessorPublicToken } : {}),
    },
  }));
  return {
    batchId: batch.id,
    status: batch.status,
    totalRecords: batch.totalRecords,
    processedRecords: batch.successfulRecords + batch.failedRecords,
    failedRecords: batch.failedRecords,
    createdAt: batch.createdAt,
    updatedAt: batch.updatedAt,
    startedAt: batch.startedAt,
    ...(batch.status === 'completed' && batch.completedAt ? { completedAt: batch.completedAt } : {}),
    ...(batch.canceledAt && batch.status === 'canceled' ? { canceledAt: batch.canceledAt } : {}),
    ...(batch.failureReason && batch.status === 'failed' ? { failureReason: batch.failureReason } : {}),
    summary: { successfulRecords: batch.successfulRecords, errors },
    ...(page ? { meta: pageMeta(page, batch.failedRecords) } : {}),
  };
}
