// One shared applicant's way through onboarding, for a batch row or a sync request alike:
// pending → (entity resolved) → (applicant imported, decision taken) → succeeded | failed.
// Every step is idempotent, so a retried activity never imports, counts or announces twice.
import { recordError, type ImportErrorCategory, type RecordError } from '../domain/import-errors.ts';
import type { VerificationRef } from '../domain/lifecycle-events.ts';
import type { Decision } from '../domain/reliance.ts';
import type { ShareRef } from '../contract/share-record.ts';
import { recordAudit } from './audit-log.ts';
import { isUniqueViolation, type Db, type Queryable, type Tx } from './db.ts';

export type ShareRecord = {
  businessId: string;
  externalId: string;
  shareToken: string;
  applicantLevel: string | null;
  cardProcessorPublicToken: string | null;
  status: 'pending' | 'succeeded' | 'failed';
  entityId: string | null;
  applicantId: string | null;
  decision: Decision | null;
  /** Import requests sent to the provider for this record so far. */
  importAttempts: number;
  /** The failure's category, once failed. */
  errorCategory: ImportErrorCategory | null;
  /** A batch row's batch status (a canceled batch starts no more rows); null for a sync request. */
  batchStatus: string | null;
};

/** The verification a record is, as its verification_status_change events name it. */
export function shareVerification(ref: ShareRef): Omit<VerificationRef, 'path'> {
  return ref.kind === 'batch' ? { verificationId: ref.batchId, rowNumber: ref.rowNumber } : { verificationId: ref.requestId };
}

/** A stable name for the record: the provider-side externalUserId and the event's source key. */
export function shareRefKey(ref: ShareRef): string {
  return ref.kind === 'batch' ? `vouch-batch-${ref.batchId}-${ref.rowNumber}` : `vouch-sync-${ref.requestId}`;
}

function where(ref: ShareRef): { table: string; clause: string; params: unknown[] } {
  return ref.kind === 'batch'
    ? { table: 'import_records', clause: 'batch_id = $1 AND row_number = $2', params: [ref.batchId, ref.rowNumber] }
    : { table: 'sync_imports', clause: 'request_id = $1', params: [ref.requestId] };
}

/** Loads the record; `lock` takes its row lock for the rest of the caller's transaction. */
export async function loadShareRecord(db: Queryable, ref: ShareRef, lock = false): Promise<ShareRecord> {
  const w = where(ref);
  const sql =
    ref.kind === 'batch'
      ? `SELECT r.*, b.business_id, b.status AS batch_status FROM import_records r JOIN import_batches b ON b.id = r.batch_id
          WHERE r.batch_id = $1 AND r.row_number = $2${lock ? ' FOR UPDATE OF r' : ''}`
      : `SELECT * FROM sync_imports WHERE ${w.clause}${lock ? ' FOR UPDATE' : ''}`;
  const [r] = await db.query(sql, w.params);
  if (!r) throw new Error(`no share record ${shareRefKey(ref)}`);
  return {
    businessId: String(r.business_id),
    externalId: String(r.external_id),
    shareToken: String(r.share_token),
    applicantLevel: (r.applicant_level as string | undefined) ?? null,
    cardProcessorPublicToken: (r.card_processor_public_token as string | null) ?? null,
    status: r.status as ShareRecord['status'],
    entityId: (r.entity_id as string | null) ?? null,
    applicantId: (r.applicant_id as string | null) ?? null,
    decision: (r.decision as Decision | null) ?? null,
    importAttempts: Number(r.import_attempts ?? 0),
    errorCategory: (r.error_category as ImportErrorCategory | null) ?? null,
    batchStatus: (r.batch_status as string | undefined) ?? null,
  };
}

/** Updates the record (only while pending, unless told); `also`, a further condition on `values`. */
async function update(db: Queryable, ref: ShareRef, set: string, values: unknown[], onlyPending = true, also?: string): Promise<number> {
  const w = where(ref);
  const shift = (sql: string) => sql.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + values.length}`);
  const rows = await db.query(
    `UPDATE ${w.table} SET ${set}, updated_at = now() WHERE ${shift(w.clause)}` +
      `${onlyPending ? " AND status = 'pending'" : ''}${also ? ` AND ${also}` : ''} RETURNING 1`,
    [...values, ...w.params],
  );
  return rows.length;
}

export const setRecordEntity = (db: Queryable, ref: ShareRef, entityId: string) => update(db, ref, 'entity_id = $1', [entityId]);

/**
 * In the caller's transaction: records the entity and counts the import request about to be sent
 * (before it is, so a lost answer is still counted). 0 when the entity is gone — deleted since it was
 * resolved, its deletion waited for if under way — or the record is no longer pending: then no
 * request may be sent (onboarding/share-records.ts beforeImport records the verification's start).
 */
export function beforeImportIn(tx: Tx, ref: ShareRef, entityId: string): Promise<number> {
  return update(
    tx,
    ref,
    'entity_id = $1, import_attempts = import_attempts + 1',
    [entityId],
    true,
    'EXISTS (SELECT 1 FROM entities WHERE id = $1 FOR KEY SHARE)',
  );
}

export const setRecordImported = (db: Queryable, ref: ShareRef, applicantId: string, decision: Decision) =>
  update(db, ref, 'applicant_id = $1, decision = $2', [applicantId, JSON.stringify(decision)]);

async function bumpBatch(db: Queryable, ref: ShareRef, outcome: 'succeeded' | 'failed') {
  if (ref.kind !== 'batch') return;
  const column = outcome === 'succeeded' ? 'successful_records' : 'failed_records';
  await db.query(`UPDATE import_batches SET ${column} = ${column} + 1, updated_at = now() WHERE id = $1`, [ref.batchId]);
}

/** share.failed: which record (batch and row, or sync request) and the error's category; its message stays with the record. */
function recordShareFailed(tx: Tx, ref: ShareRef, rec: { businessId: string; entityId: string | null }, error: RecordError): void {
  recordAudit(tx, {
    businessId: rec.businessId,
    action: 'share.failed',
    entityId: rec.entityId,
    subject: ref.kind === 'batch' ? { type: 'batch', id: ref.batchId } : { type: 'sync_import', id: ref.requestId },
    details:
      ref.kind === 'batch'
        ? { batchId: ref.batchId, rowNumber: ref.rowNumber, errorCode: error.category, retryable: error.retryable }
        : { requestId: ref.requestId, errorCode: error.category, retryable: error.retryable },
  });
}

/**
 * In the caller's transaction: a pending record failed, counted in its batch and audited (share.failed)
 * — only if this call moved it (overlapping attempts count once); `rec` names its business and entity
 * (null: the entity is gone).
 */
export async function markRecordFailedIn(tx: Tx, ref: ShareRef, rec: { businessId: string; entityId: string | null }, error: RecordError): Promise<boolean> {
  const changed = await update(tx, ref, "status = 'failed', error_category = $1, error_message = $2, retryable = $3", [
    error.category,
    error.message,
    error.retryable,
  ]);
  if (!changed) return false;
  await bumpBatch(tx, ref, 'failed');
  recordShareFailed(tx, ref, rec, error);
  return true;
}

/** In the caller's transaction: a pending record succeeded, counted in its batch (once: only if this call moved it). */
export async function markRecordSucceededIn(db: Queryable, ref: ShareRef): Promise<void> {
  if ((await update(db, ref, "status = 'succeeded'", [])) === 1) await bumpBatch(db, ref, 'succeeded');
}
