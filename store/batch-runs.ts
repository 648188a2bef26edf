// What both kinds of batch share in PostgreSQL (the token-sharing CSV, import_batches, and the
// requirement submissions, requirement_batches): finding one by id, key or content, the records
// still to do, and the transitions pending → in_progress → completed | failed | canceled. One
// implementation, named by the tables.
import type { AuditAction } from '../domain/audit-actions.ts';
import { recordAudit } from './audit-log.ts';
import type { BatchStatus } from '../domain/batch-status.ts';
import { iso, type Db, type Queryable, type Row, type Tx } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

export type BatchTables = {
  batches: 'import_batches' | 'requirement_batches';
  records: 'import_records' | 'requirement_batch_records';
  /** The audit entries of a cancel and of a retry, and their subject's type. */
  canceled: Extract<AuditAction, 'batch.canceled' | 'requirement_batch.canceled'>;
  retried: Extract<AuditAction, 'batch.retried' | 'requirement_batch.retried'>;
  subject: 'batch' | 'requirement_batch';
  /** What a retry's audit entry calls the records it runs again: a CSV's `rows`, or `records`. */
  counted: 'rows' | 'records';
};

/** What a retry came to: the records run again and the new run's number, or why there is none. */
export type Reopened = { requeued: number; run: number } | 'running' | 'not-found' | 'nothing';

/** The columns every kind of batch has, as read from its row. */
export const batchColumns = (r: Row) => ({
  id: String(r.id),
  businessId: String(r.business_id),
  idempotencyKey: String(r.idempotency_key),
  contentSha256: String(r.content_sha256),
  status: r.status as BatchStatus,
  totalRecords: Number(r.total_records),
  failureReason: (r.failure_reason as string | null) ?? null,
  /** 1 for the upload's run, then one more for each retry. */
  run: Number(r.run),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  startedAt: r.started_at ? iso(r.started_at) : null,
  completedAt: r.completed_at ? iso(r.completed_at) : null,
  canceledAt: r.canceled_at ? iso(r.canceled_at) : null,
});

/** A batch as every kind has it. */
export type BatchColumns = ReturnType<typeof batchColumns>;

export function batchRuns<B>(t: BatchTables, toBatch: (r: Row) => B) {
  const findBy = async (db: Queryable, businessId: string, column: 'id' | 'idempotency_key' | 'content_sha256', value: string) => {
    const [r] = await db.query(`SELECT * FROM ${t.batches} WHERE business_id = $1 AND ${column} = $2`, [businessId, value]);
    return r ? toBatch(r) : undefined;
  };
  return {
    find: (db: Queryable, businessId: string, id: string) => findBy(db, businessId, 'id', id),
    findByKey: (db: Queryable, businessId: string, key: string) => findBy(db, businessId, 'idempotency_key', key),
    findByContent: (db: Queryable, businessId: string, sha256: string) => findBy(db, businessId, 'content_sha256', sha256),

    /**
     * Row numbers still to do after `afterRow`, in order; none once the batch has stopped (canceled or
     * failed), so a run whose workflow never heard of a cancel ends at the next page instead of
     * scheduling a step for every remaining row.
     */
    async pendingRows(db: Queryable, batchId: string, afterRow: number, limit: number): Promise<number[]> {
      const rows = await db.query<{ row_number: number }>(
        `SELECT r.row_number FROM ${t.records} r JOIN ${t.batches} b ON b.id = r.batch_id
          WHERE r.batch_id = $1 AND r.status = 'pending' AND r.row_number > $2 AND b.status IN ('pending', 'in_progress')
          ORDER BY r.row_number LIMIT $3`,
        [batchId, afterRow, limit],
      );
      return rows.map((r) => Number(r.row_number));
    },

    /** pending → in_progress (startedAt set once); a retry run moves a finished batch back to in_progress. */
    async markStarted(db: Queryable, batchId: string): Promise<void> {
      await db.query(
        `UPDATE ${t.batches} SET status = 'in_progress', started_at = COALESCE(started_at, now()), completed_at = NULL, failure_reason = NULL,
                updated_at = now()
          WHERE id = $1 AND status IN ('pending', 'in_progress')`,
        [batchId],
      );
    },

    async markCompleted(db: Queryable, batchId: string): Promise<void> {
      await db.query(`UPDATE ${t.batches} SET status = 'completed', completed_at = now(), updated_at = now() WHERE id = $1 AND status = 'in_progress'`, [
        batchId,
      ]);
    },

    async markFailed(db: Queryable, batchId: string, reason: string): Promise<void> {
      await db.query(
        `UPDATE ${t.batches} SET status = 'failed', failure_reason = $2, updated_at = now() WHERE id = $1 AND status IN ('pending', 'in_progress')`,
        [batchId, reason],
      );
    },

    /** Cancels a batch that has not finished; false when it already had. */
    async markCanceled(db: Writer, businessId: string, batchId: string): Promise<boolean> {
      return inTx(db, async (tx) => {
        const rows = await tx.query(
          `UPDATE ${t.batches} SET status = 'canceled', canceled_at = now(), updated_at = now()
            WHERE id = $1 AND business_id = $2 AND status IN ('pending', 'in_progress') RETURNING 1`,
          [batchId, businessId],
        );
        if (rows.length === 1) recordAudit(tx, { businessId, action: t.canceled, subject: { type: t.subject, id: batchId } });
        return rows.length === 1;
      });
    },

    /**
     * Runs a finished batch again (POST …/retry): `requeue` first puts the kind's retryable failed
     * records back to pending in the same transaction and says how many (they leave the failed
     * count); the new run then handles every pending record — those and the ones a canceled or
     * failed run never reached. 'running' while a run is under way; 'nothing' when none is pending.
     */
    async reopen(db: Db, businessId: string, batchId: string, requeue?: (tx: Tx, batchId: string) => Promise<number>): Promise<Reopened> {
      return db.tx(async (tx) => {
        const [batch] = await tx.query(`SELECT status FROM ${t.batches} WHERE id = $1 AND business_id = $2 FOR UPDATE`, [batchId, businessId]);
        if (!batch) return 'not-found';
        if (batch.status === 'pending' || batch.status === 'in_progress') return 'running';
        const requeued = requeue ? await requeue(tx, batchId) : 0;
        const [pending] = await tx.query<{ n: string }>(`SELECT count(*) AS n FROM ${t.records} WHERE batch_id = $1 AND status = 'pending'`, [batchId]);
        const n = Number(pending?.n ?? 0);
        if (n === 0) return 'nothing';
        // a kind that counts its failed records (a CSV's) stops counting the ones it runs again
        const uncount = requeue ? `failed_records = failed_records - ${requeued}, ` : '';
        const [reopened] = await tx.query<{ run: number }>(
          `UPDATE ${t.batches} SET status = 'in_progress', ${uncount}run = run + 1, completed_at = NULL, canceled_at = NULL, failure_reason = NULL,
                  updated_at = now()
            WHERE id = $1 RETURNING run`,
          [batchId],
        );
        const run = Number(reopened!.run);
        recordAudit(tx, { businessId, action: t.retried, subject: { type: t.subject, id: batchId }, details: { [t.counted]: n, run } });
        return { requeued: n, run };
      });
    },

    /** Unfinished batches not updated for `olderThanMs` (the reconciler checks that their workflow lives). */
    async stale(db: Queryable, olderThanMs: number, limit = 200): Promise<{ batchId: string; run: number; businessId: string }[]> {
      const rows = await db.query<{ id: string; run: number; business_id: string }>(
        `SELECT id, run, business_id FROM ${t.batches} WHERE status IN ('pending', 'in_progress') AND updated_at < now() - make_interval(secs => $1)
          ORDER BY updated_at LIMIT $2`,
        [olderThanMs / 1000, limit],
      );
      return rows.map((r) => ({ batchId: r.id, run: Number(r.run), businessId: String(r.business_id) }));
    },
  };
}
