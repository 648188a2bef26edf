// A batch's states (interface 3.1, written in lower case) and its status record (interface 2.3),
// built from a batch and its failed rows (what the status and cancel endpoints answer).
import { z } from 'zod';
import { pageMeta, pageMetaSchema, type Page } from './pagination.ts';

export const BATCH_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'canceled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
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

const recordErrorSchema = z.object({
  rowNumber: z.number().int(),
  error: z.string(),
  errorDetail: z.object({ category: z.string(), message: z.string(), retryable: z.boolean() }),
  entityData: z.object({ externalId: z.string(), shareToken: z.string(), cardProcessorPublicToken: z.string().optional() }),
});

/**
 * The status record (2.3) of a batch whose per-record errors are `errorSchema` and whose summary has
 * `summaryExtra` beside successfulRecords and errors: the token-sharing batch's, and the requirement
 * batch's (v1.1.0), one shape.
 */
export function statusRecordSchema<E extends z.ZodType, X extends z.ZodRawShape>(errorSchema: E, summaryExtra: X) {
  return z.object({
    batchId: z.uuid(),
    status: z.enum(BATCH_STATUSES),
    totalRecords: z.number().int(),
    processedRecords: z.number().int(),
    failedRecords: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
    startedAt: z.string().nullable(),
    completedAt: z.string().optional(),
    canceledAt: z.string().optional(),
    failureReason: z.string().optional(),
    summary: z.object({ successfulRecords: z.number().int(), ...summaryExtra, errors: z.array(errorSchema) }),
    meta: pageMetaSchema().optional().meta({ description: 'With page or limit (v1.0.2): the page of summary.errors, as on the list endpoints' }),
  });
}

/** The status record (2.3), as the status and cancel endpoints answer it. */
export const batchStatusSchema = statusRecordSchema(recordErrorSchema, {});
export type BatchStatusRecord = z.input<typeof batchStatusSchema>;

/**
 * The status record's fields of the batch itself, its counters and (with `page`) `meta`; the caller
 * puts its summary (successfulRecords, errors, its own counts) beside them.
 */
export function statusRecordFields(batch: BatchView, page: Page | null) {
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
    ...(page ? { meta: pageMeta(page, batch.failedRecords) } : {}),
  };
}

/** The status record (2.3); with `page`, failed holds that page of the errors and `meta` says which. */
export function batchStatusRecord(batch: BatchView, failed: readonly FailedRowView[], page: Page | null = null): BatchStatusRecord {
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
  return { ...statusRecordFields(batch, page), summary: { successfulRecords: batch.successfulRecords, errors } };
}
