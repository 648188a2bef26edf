// What both kinds of batch share in PostgreSQL (the token-sharing CSV, import_batches, and the
// requirement submissions, requirement_batches): finding one by id, key or content, the records
// still to do, and the transitions pending → in_progress → completed | failed | canceled. One
// implementation, named by the tables.
import type { AuditAction } from '../domain/audit-actions.ts';
import { recordAudit } from './audit-log.ts';
import type { Queryable, Row } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

export type BatchTables = {
  batches: 'import_batches' | 'requirement_batches';
  records: 'import_records' | 'requirement_batch_records';
  /** The audit entry of a cancel, and its subject's type. */
  canceled: Extract<AuditAction, 'batch.canceled' | 'requirement_batch.canceled'>;
  subject: 'batch' | 'requirement_batch';
};

export function batchRuns<B>(t: BatchTables, toBatch: (r: Row) => B) {
  const findBy = async (q: Queryable, businessId: string, column: 'id' | 'idempotency_key' | 'content_sha256', value: string) => {
    const [r] = await q.query(`SELECT * FROM ${t.batches} WHERE business_id = $1 AND ${column} = $2`, [businessId, value]);
    return r ? toBatch(r) : undefined;
  };
  return {
    find: (q: Queryable, businessId: string, id: string) => findBy(q, businessId, 'id', id),
    findByKey: (q: Queryable, businessId: string, key: string) => findBy(q, businessId, 'idempotency_key', key),
    findByContent: (q: Queryable, businessId: string, sha256: string) => findBy(q, businessId, 'content_sha256', sha256),

    /**
     * Row numbers still to do after `afterRow`, in order; none once the batch has stopped (canceled or
     * failed), so a run whose workflow never heard of a cancel ends at the next page instead of
     * scheduling a step for every remaining row.
     */
    async pendingRows(q: Queryable, batchId: string, afterRow: number, limit: number): Promise<number[]> {
      const rows = await q.query<{ row_number: number }>(
        `SELECT r.row_number FROM ${t.records} r JOIN ${t.batches} b ON b.id = r.batch_id
          WHERE r.batch_id = $1 AND r.status = 'pending' AND r.row_number > $2 AND b.status IN ('pending', 'in_progress')
          ORDER BY r.row_number LIMIT $3`,
        [batchId, afterRow, limit],
      );
      return rows.map((r) => Number(r.row_number));
    },

    /** pending → in_progress (startedAt set once); a retry run moves a finished batch back to in_progress. */
    async markStarted(q: Queryable, batchId: string): Promise<void> {
      await q.query(
        `UPDATE ${t.batches} SET status = 'in_progress', started_at = COALESCE(started_at, now()), completed_at = NULL, failure_reason = NULL,
                updated_at = now()
          WHERE id = $1 AND status IN ('pending', 'in_progress')`,
        [batchId],
      );
    },

    async markCompleted(q: Queryable, batchId: string): Promise<void> {
      await q.query(`UPDATE ${t.batches} SET status = 'completed', completed_at = now(), updated_at = now() WHERE id = $1 AND status = 'in_progress'`, [
        batchId,
      ]);
    },

    async markFailed(q: Queryable, batchId: string, reason: string): Promise<void> {
      await q.query(
        `UPDATE ${t.batches} SET status = 'failed', failure_reason = $2, updated_at = now() WHERE id = $1 AND status IN ('pending', 'in_progress')`,
        [batchId, reason],
      );
    },

    /** Cancels a batch that has not finished; false when it already had. */
    async markCanceled(q: Writer, businessId: string, batchId: string): Promise<boolean> {
      return inTx(q, async (tx) => {
        const rows = await tx.query(
          `UPDATE ${t.batches} SET status = 'canceled', canceled_at = now(), updated_at = now()
            WHERE id = $1 AND business_id = $2 AND status IN ('pending', 'in_progress') RETURNING 1`,
          [batchId, businessId],
        );
        if (rows.length === 1) recordAudit(tx, { businessId, action: t.canceled, subject: { type: t.subject, id: batchId } });
        return rows.length === 1;
      });
    },

    /** Unfinished batches not updated for `olderThanMs` (the reconciler checks that their workflow lives). */
    async stale(q: Queryable, olderThanMs: number, limit = 200): Promise<{ batchId: string; run: number; businessId: string }[]> {
      const rows = await q.query<{ id: string; run: number; business_id: string }>(
        `SELECT id, run, business_id FROM ${t.batches} WHERE status IN ('pending', 'in_progress') AND updated_at < now() - make_interval(secs => $1)
          ORDER BY updated_at LIMIT $2`,
        [olderThanMs / 1000, limit],
      );
      return rows.map((r) => ({ batchId: r.id, run: Number(r.run), businessId: String(r.business_id) }));
    },
  };
}
