// Batch imports: the batch and its rows as stored at upload, their status record (interface 2.3),
// and the transitions pending → in_progress → completed | failed | canceled.
import { randomUUID } from 'node:crypto';
import type { BatchRow } from '../domain/batch-csv.ts';
import { recordAudit } from './audit-log.ts';
import { iso, type Db, type Queryable, type Row } from './db.ts';
import { batchColumns, batchRuns, type BatchColumns } from './batch-runs.ts';

import { offsetOf, type Page } from '../domain/pagination.ts';

export type Batch = BatchColumns & {
  provider: string;
  /** Columns of the file that were ignored (unknown, or a repeat), as `name (column n)`. */
  ignoredColumns: string[];
  successfulRecords: number;
  failedRecords: number;
};

const toBatch = (r: Row): Batch => ({
  ...batchColumns(r),
  provider: String(r.provider),
  ignoredColumns: (r.ignored_columns as string[] | null) ?? [],
  successfulRecords: Number(r.successful_records),
  failedRecords: Number(r.failed_records),
});

const runs = batchRuns(
  { batches: 'import_batches', records: 'import_records', canceled: 'batch.canceled', retried: 'batch.retried', subject: 'batch', counted: 'rows' },
  toBatch,
);
export const findBatch = runs.find;
export const findBatchByKey = runs.findByKey;
export const findBatchByContent = runs.findByContent;
export const pendingRowNumbers = runs.pendingRows;
export const markBatchStarted = runs.markStarted;
export const markBatchCompleted = runs.markCompleted;
export const markBatchFailed = runs.markFailed;
export const markBatchCanceled = runs.markCanceled;
export const staleUnfinishedBatches = runs.stale;

/** Stores the batch and all its rows in one transaction (rows inserted 1,000 at a time). */
export async function createBatch(
  db: Db,
  input: {
    businessId: string;
    provider: string;
    idempotencyKey: string;
    contentSha256: string;
    fileName: string | null;
    rows: BatchRow[];
    ignoredColumns?: string[];
  },
): Promise<Batch> {
  return db.tx(async (tx) => {
    const failed = input.rows.filter((x) => x.failure).length;
    const [r] = await tx.query(
      `INSERT INTO import_batches (id, business_id, provider, idempotency_key, content_sha256, file_name, total_records, failed_records, ignored_columns)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [
        randomUUID(),
        input.businessId,
        input.provider,
        input.idempotencyKey,
        input.contentSha256,
        input.fileName,
        input.rows.length,
        failed,
        input.ignoredColumns ?? [],
      ],
    );
    const batch = toBatch(r!);
    recordAudit(tx, {
      businessId: input.businessId,
      action: 'batch.uploaded',
      subject: { type: 'batch', id: batch.id },
      details: { sha256: input.contentSha256, rows: input.rows.length, failedAtUpload: failed, provider: input.provider },
    });
    // records that fail on their own (domain/batch-csv.ts) are stored failed, not retryable: the run never sees them
    for (let i = 0; i < input.rows.length; i += 1000) {
      const chunk = input.rows.slice(i, i + 1000);
      await tx.query(
        `INSERT INTO import_records (batch_id, row_number, external_id, share_token, applicant_level, card_processor_public_token,
                                     status, error_category, error_message, retryable)
         SELECT $1, n, e, t, l, c, CASE WHEN fc IS NULL THEN 'pending' ELSE 'failed' END, fc, fm, CASE WHEN fc IS NULL THEN NULL ELSE false END
           FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS u(n, e, t, l, c, fc, fm)`,
        [
          batch.id,
          chunk.map((x) => x.rowNumber),
          chunk.map((x) => x.externalId),
          chunk.map((x) => x.shareToken),
          chunk.map((x) => x.applicantLevel),
          chunk.map((x) => x.cardProcessorPublicToken),
          chunk.map((x) => x.failure?.category ?? null),
          chunk.map((x) => x.failure?.message ?? null),
        ],
      );
    }
    return batch;
  });
}

/**
 * Runs a finished batch again: its retryable failed rows back to pending (their entity looked up
 * again by externalId: it may have been deleted, or created again, since), with the rows a canceled
 * or failed run never reached.
 */
export const requeueRetryableRows = (db: Db, businessId: string, batchId: string) =>
  runs.reopen(db, businessId, batchId, async (tx, id) => {
    const requeued = await tx.query(
      `UPDATE import_records SET status = 'pending', entity_id = NULL, error_category = NULL, error_message = NULL, retryable = NULL, updated_at = now()
        WHERE batch_id = $1 AND status = 'failed' AND retryable RETURNING 1`,
      [id],
    );
    await tx.query("UPDATE import_records SET entity_id = NULL WHERE batch_id = $1 AND status = 'pending' AND applicant_id IS NULL AND entity_id IS NOT NULL", [
      id,
    ]);
    return requeued.length;
  });

export type FailedRow = {
  rowNumber: number;
  externalId: string;
  shareToken: string;
  applicantLevel: string | null;
  cardProcessorPublicToken: string | null;
  category: string;
  message: string;
  retryable: boolean;
};

/** The batch's failed rows in row order: all of them, or one page. */
export async function failedRows(db: Queryable, batchId: string, page: Page | null = null): Promise<FailedRow[]> {
  const paged = page ? ` LIMIT ${page.limit} OFFSET ${offsetOf(page)}` : '';
  const rows = await db.query(`SELECT * FROM import_records WHERE batch_id = $1 AND status = 'failed' ORDER BY row_number${paged}`, [batchId]);
  return rows.map((r) => ({
    rowNumber: Number(r.row_number),
    externalId: String(r.external_id),
    shareToken: String(r.share_token),
    applicantLevel: (r.applicant_level as string | null) ?? null,
    cardProcessorPublicToken: (r.card_processor_public_token as string | null) ?? null,
    category: String(r.error_category),
    message: String(r.error_message),
    retryable: Boolean(r.retryable),
  }));
}
