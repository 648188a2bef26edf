// Batch imports: the batch and its rows as stored at upload, their status record (interface 2.3),
// and the transitions pending → in_progress → completed | failed | canceled.
import { randomUUID } from 'node:crypto';
import type { BatchRow } from '../domain/batch-csv.ts';
import { recordAudit } from './audit-log.ts';
import { iso, type Db, type Queryable, type Row } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

import type { BatchStatus } from '../domain/batch-status.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';

export type Batch = {
  id: string;
  businessId: string;
  provider: string;
  idempotencyKey: string;
  contentSha256: string;
  status: BatchStatus;
  totalRecords: number;
  /** Columns of the file that were ignored (unknown, or a repeat), as `name (column n)`. */
  ignoredColumns: string[];
  successfulRecords: number;
  failedRecords: number;
  failureReason: string | null;
  /** 1 for the upload's run, then one more for each retry of failed rows. */
  run: number;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  canceledAt: string | null;
};

const toBatch = (r: Row): Batch => ({
  id: String(r.id),
  businessId: String(r.business_id),
  provider: String(r.provider),
  idempotencyKey: String(r.idempotency_key),
  contentSha256: String(r.content_sha256),
  status: r.status as BatchStatus,
  totalRecords: Number(r.total_records),
  ignoredColumns: (r.ignored_columns as string[] | null) ?? [],
  successfulRecords: Number(r.successful_records),
  failedRecords: Number(r.failed_records),
  failureReason: (r.failure_reason as string | null) ?? null,
  run: Number(r.run),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  startedAt: r.started_at ? iso(r.started_at) : null,
  completedAt: r.completed_at ? iso(r.completed_at) : null,
  canceledAt: r.canceled_at ? iso(r.canceled_at) : null,
});

export async function findBatch(q: Queryable, businessId: string, id: string): Promise<Batch | undefined> {
  const [r] = await q.query('SELECT * FROM import_batches WHERE id = $1 AND business_id = $2', [id, businessId]);
  return r ? toBatch(r) : undefined;
}

export async function findBatchByKey(q: Queryable, businessId: string, key: string): Promise<Batch | undefined> {
  const [r] = await q.query('SELECT * FROM import_batches WHERE business_id = $1 AND idempotency_key = $2', [businessId, key]);
  return r ? toBatch(r) : undefined;
}

export async function findBatchByContent(q: Queryable, businessId: string, sha256: string): Promise<Batch | undefined> {
  const [r] = await q.query('SELECT * FROM import_batches WHERE business_id = $1 AND content_sha256 = $2', [businessId, sha256]);
  return r ? toBatch(r) : undefined;
}

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
  return db.tx(async (q) => {
    const failed = input.rows.filter((x) => x.failure).length;
    const [r] = await q.query(
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
    recordAudit(q, {
      businessId: input.businessId,
      action: 'batch.uploaded',
      subject: { type: 'batch', id: batch.id },
      details: { sha256: input.contentSha256, rows: input.rows.length, failedAtUpload: failed, provider: input.provider },
    });
    // records that fail on their own (domain/batch-csv.ts) are stored failed, not retryable: the run never sees them
    for (let i = 0; i < input.rows.length; i += 1000) {
      const chunk = input.rows.slice(i, i + 1000);
      await q.query(
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
 * Row numbers still to do after `afterRow`, in order; none once the batch has stopped (canceled or
 * failed), so a run whose workflow never heard of a cancel ends at the next page instead of
 * scheduling a step for every remaining row.
 */
export async function pendingRowNumbers(q: Queryable, batchId: string, afterRow: number, limit: number): Promise<number[]> {
  const rows = await q.query<{ row_number: number }>(
    `SELECT r.row_number FROM import_records r JOIN import_batches b ON b.id = r.batch_id
      WHERE r.batch_id = $1 AND r.status = 'pending' AND r.row_number > $2 AND b.status IN ('pending', 'in_progress')
      ORDER BY r.row_number LIMIT $3`,
    [batchId, afterRow, limit],
  );
  return rows.map((r) => Number(r.row_number));
}

/** pending → in_progress (startedAt set once); a retry run moves a finished batch back to in_progress. */
export async function markBatchStarted(q: Queryable, batchId: string): Promise<void> {
  await q.query(
    `UPDATE import_batches SET status = 'in_progress', started_at = COALESCE(started_at, now()), completed_at = NULL, failure_reason = NULL, updated_at = now()
     WHERE id = $1 AND status IN ('pending', 'in_progress')`,
    [batchId],
  );
}

export async function markBatchCompleted(q: Queryable, batchId: string): Promise<void> {
  await q.query("UPDATE import_batches SET status = 'completed', completed_at = now(), updated_at = now() WHERE id = $1 AND status = 'in_progress'", [batchId]);
}

export async function markBatchFailed(q: Queryable, batchId: string, reason: string): Promise<void> {
  await q.query("UPDATE import_batches SET status = 'failed', failure_reason = $2, updated_at = now() WHERE id = $1 AND status IN ('pending', 'in_progress')", [
    batchId,
    reason,
  ]);
}

/** Cancels a batch that has not finished; false when it already had. */
export async function markBatchCanceled(q: Writer, businessId: string, batchId: string): Promise<boolean> {
  return inTx(q, async (tx) => {
    const rows = await tx.query(
      "UPDATE import_batches SET status = 'canceled', canceled_at = now(), updated_at = now() " +
        "WHERE id = $1 AND business_id = $2 AND status IN ('pending', 'in_progress') RETURNING 1",
      [batchId, businessId],
    );
    if (rows.length === 1) recordAudit(tx, { businessId, action: 'batch.canceled', subject: { type: 'batch', id: batchId } });
    return rows.length === 1;
  });
}

/** Puts a finished batch's retryable failed rows (and rows never reached) back to pending. */
export async function requeueRetryableRows(
  db: Db,
  businessId: string,
  batchId: string,
): Promise<{ requeued: number; run: number } | 'running' | 'not-found' | 'nothing'> {
  return db.tx(async (q) => {
    const [b] = await q.query('SELECT status FROM import_batches WHERE id = $1 AND business_id = $2 FOR UPDATE', [batchId, businessId]);
    if (!b) return 'not-found';
    if (b.status === 'pending' || b.status === 'in_progress') return 'running';
    const requeued = await q.query(
      // the entity is looked up again by the row's externalId (it may have been deleted, or created again, since)
      `UPDATE import_records SET status = 'pending', entity_id = NULL, error_category = NULL, error_message = NULL, retryable = NULL, updated_at = now()
       WHERE batch_id = $1 AND status = 'failed' AND retryable RETURNING 1`,
      [batchId],
    );
    await q.query("UPDATE import_records SET entity_id = NULL WHERE batch_id = $1 AND status = 'pending' AND applicant_id IS NULL AND entity_id IS NOT NULL", [
      batchId,
    ]);
    const [pending] = await q.query<{ n: string }>("SELECT count(*) AS n FROM import_records WHERE batch_id = $1 AND status = 'pending'", [batchId]);
    if (Number(pending?.n ?? 0) === 0) return 'nothing';
    const [b2] = await q.query<{ run: number }>(
      `UPDATE import_batches SET status = 'in_progress', failed_records = failed_records - $2, run = run + 1, completed_at = NULL, canceled_at = NULL,
       failure_reason = NULL, updated_at = now() WHERE id = $1 RETURNING run`,
      [batchId, requeued.length],
    );
    recordAudit(q, {
      businessId,
      action: 'batch.retried',
      subject: { type: 'batch', id: batchId },
      details: { rows: Number(pending!.n), run: Number(b2!.run) },
    });
    return { requeued: Number(pending!.n), run: Number(b2!.run) };
  });
}

/** Unfinished batches not updated for `olderThanMs` (the reconciler checks that their workflow lives). */
export async function staleUnfinishedBatches(q: Queryable, olderThanMs: number, limit = 200): Promise<{ batchId: string; run: number; businessId: string }[]> {
  const rows = await q.query<{ id: string; run: number; business_id: string }>(
    `SELECT id, run, business_id FROM import_batches WHERE status IN ('pending', 'in_progress') AND updated_at < now() - make_interval(secs => $1)
      ORDER BY updated_at LIMIT $2`,
    [olderThanMs / 1000, limit],
  );
  return rows.map((r) => ({ batchId: r.id, run: Number(r.run), businessId: String(r.business_id) }));
}

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
export async function failedRows(q: Queryable, batchId: string, page: Page | null = null): Promise<FailedRow[]> {
  const paged = page ? ` LIMIT ${page.limit} OFFSET ${offsetOf(page)}` : '';
  const rows = await q.query(`SELECT * FROM import_records WHERE batch_id = $1 AND status = 'failed' ORDER BY row_number${paged}`, [batchId]);
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
