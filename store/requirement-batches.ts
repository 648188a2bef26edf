// Batches of requirement submissions: the batch and its records as stored at upload, their status
// (counted from the records), the transitions pending → in_progress → completed | failed | canceled,
// and each record's claim: a record is handled in one transaction that takes it from pending to its
// final state, so a record is handled once however often a crashed step runs again.
import { randomUUID } from 'node:crypto';
import type { RequirementLine } from '../domain/requirement-lines.ts';
import type { FailedRecordView, RecordFailure, RequirementBatchCounts } from '../domain/requirement-batch.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';
import { recordAudit } from './audit-log.ts';
import { batchColumns, batchRuns, type BatchColumns } from './batch-runs.ts';
import { iso, type Db, type Queryable, type Row, type Tx } from './db.ts';

export type RequirementBatch = BatchColumns;

const runs = batchRuns(
  {
    batches: 'requirement_batches',
    records: 'requirement_batch_records',
    canceled: 'requirement_batch.canceled',
    retried: 'requirement_batch.retried',
    subject: 'requirement_batch',
    counted: 'records',
  },
  batchColumns,
);
export const findRequirementBatch = runs.find;
export const findRequirementBatchByKey = runs.findByKey;
export const findRequirementBatchByContent = runs.findByContent;
export const pendingRequirementRows = runs.pendingRows;
export const markRequirementBatchStarted = runs.markStarted;
export const markRequirementBatchCompleted = runs.markCompleted;
export const markRequirementBatchFailed = runs.markFailed;
export const markRequirementBatchCanceled = runs.markCanceled;
export const staleRequirementBatches = runs.stale;

/** A record as the upload resolved it: the line, the entity its value is about, or why it fails. */
export type ResolvedRecord = RequirementLine & { targetEntityId: string | null };

const CHUNK = 1000;

/** Stores the batch and all its records in one transaction (records inserted 1,000 at a time; failed ones stored failed, not retryable). */
export async function createRequirementBatch(
  db: Db,
  input: { businessId: string; idempotencyKey: string; contentSha256: string; fileName: string | null; records: readonly ResolvedRecord[] },
): Promise<RequirementBatch> {
  return db.tx(async (tx) => {
    const failed = input.records.filter((x) => x.failure).length;
    const [r] = await tx.query(
      `INSERT INTO requirement_batches (id, business_id, idempotency_key, content_sha256, file_name, total_records)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [randomUUID(), input.businessId, input.idempotencyKey, input.contentSha256, input.fileName, input.records.length],
    );
    const batch = batchColumns(r!);
    recordAudit(tx, {
      businessId: input.businessId,
      action: 'requirement_batch.uploaded',
      subject: { type: 'requirement_batch', id: batch.id },
      details: { sha256: input.contentSha256, records: input.records.length, failedAtUpload: failed },
    });
    // the entities the records are about, held against deletion until this commits: one deleted
    // since the upload read it leaves its record without one (it fails ENTITY_NOT_FOUND when handled)
    const named = [...new Set(input.records.flatMap((r) => (r.targetEntityId ? [r.targetEntityId] : [])))];
    const alive = new Set(
      (await tx.query<{ id: string }>('SELECT id FROM entities WHERE id = ANY($1::uuid[]) FOR KEY SHARE', [named])).map((r) => String(r.id)),
    );
    for (let i = 0; i < input.records.length; i += CHUNK) {
      const c = input.records.slice(i, i + CHUNK);
      await tx.query(
        `INSERT INTO requirement_batch_records (batch_id, row_number, given_entity_id, external_id, member_id, requirement_slug, value, target_entity_id,
                                                status, error_category, error_message, error_path, retryable)
         SELECT $1, n, e, x, m, s, v, t, CASE WHEN fc IS NULL THEN 'pending' ELSE 'failed' END, fc, fm, fp, CASE WHEN fc IS NULL THEN NULL ELSE false END
           FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::text[], $10::text[], $11::text[])
             AS u(n, e, x, m, s, v, t, fc, fm, fp)`,
        [
          batch.id,
          c.map((x) => x.rowNumber),
          c.map((x) => x.entityId),
          c.map((x) => x.externalId),
          c.map((x) => x.memberId),
          c.map((x) => x.requirementSlug),
          c.map((x) => x.value),
          c.map((x) => (x.targetEntityId && alive.has(x.targetEntityId) ? x.targetEntityId : null)),
          c.map((x) => x.failure?.category ?? null),
          c.map((x) => x.failure?.message ?? null),
          c.map((x) => x.failure?.path ?? null),
        ],
      );
    }
    return batch;
  });
}

/** Counts of the batch's records by outcome. */
export async function requirementBatchCounts(db: Queryable, batchId: string): Promise<RequirementBatchCounts> {
  const rows = await db.query<{ status: string; outcome: string | null; n: string }>(
    'SELECT status, outcome, count(*) AS n FROM requirement_batch_records WHERE batch_id = $1 GROUP BY status, outcome',
    [batchId],
  );
  const counts: RequirementBatchCounts = { succeeded: 0, failed: 0, decided: 0, waiting: 0 };
  for (const r of rows) {
    const n = Number(r.n);
    if (r.status === 'succeeded') counts.succeeded += n;
    if (r.status === 'failed') counts.failed += n;
    if (r.status === 'succeeded' && r.outcome === 'decided') counts.decided += n;
    if (r.status === 'succeeded' && r.outcome === 'waiting') counts.waiting += n;
  }
  return counts;
}

/** A record's value, unless its entity was sealed since (gone, as a deleted entity's value is). */
const VISIBLE_VALUE = 'CASE WHEN target_entity_id IS NULL OR EXISTS (SELECT 1 FROM entities e WHERE e.id = target_entity_id) THEN value END AS value';

/**
 * The batch's failed records in line order: all of them, or one page; `withValues` (the failed-records
 * CSV) reads their values too, which the status record never shows.
 */
export async function failedRequirementRecords(db: Queryable, batchId: string, page: Page | null = null, withValues = false): Promise<FailedRecordView[]> {
  const paged = page ? ` LIMIT ${page.limit} OFFSET ${offsetOf(page)}` : '';
  const rows = await db.query(
    // a value submitted for an entity since sealed is gone, as a deleted one's is (its trigger, migration 020)
    `SELECT row_number, given_entity_id, external_id, member_id, requirement_slug,
            ${withValues ? VISIBLE_VALUE : 'NULL AS value'},
            error_category, error_message,
            error_path, retryable
       FROM requirement_batch_records WHERE batch_id = $1 AND status = 'failed' ORDER BY row_number${paged}`,
    [batchId],
  );
  return rows.map((r) => ({
    rowNumber: Number(r.row_number),
    entityId: (r.given_entity_id as string | null) ?? null,
    externalId: (r.external_id as string | null) ?? null,
    memberId: (r.member_id as string | null) ?? null,
    requirementSlug: (r.requirement_slug as string | null) ?? null,
    value: (r.value as string | null) ?? null,
    category: String(r.error_category),
    message: String(r.error_message),
    path: String(r.error_path ?? ''),
    retryable: Boolean(r.retryable),
  }));
}

/** Runs a finished batch again over the records a canceled or failed run never reached (a failed record fails again as it is: every category is final). */
export const requeueRequirementRecords = (db: Db, businessId: string, batchId: string) => runs.reopen(db, businessId, batchId);

/** A pending record claimed for handling (locked for the transaction), as the upload stored it. */
export type ClaimedRecord = {
  rowNumber: number;
  businessId: string;
  targetEntityId: string | null;
  requirementSlug: string;
  /** The value as JSON text (null when its entity was deleted since the upload). */
  value: string | null;
};

/** The entities these records still pending are about, read without a lock (their handling locks those entities first, then the records). */
export async function recordTargets(db: Queryable, batchId: string, rows: readonly number[]): Promise<string[]> {
  const found = await db.query<{ target_entity_id: string }>(
    `SELECT DISTINCT target_entity_id FROM requirement_batch_records
      WHERE batch_id = $1 AND row_number = ANY ($2::int[]) AND status = 'pending' AND target_entity_id IS NOT NULL`,
    [batchId, rows],
  );
  return found.map((r) => String(r.target_entity_id));
}

/**
 * Claims these records for this transaction: locked (in row order), still pending, their batch still
 * running; those handled already (a step run again after a crash), or of a batch that has stopped,
 * are not returned. The caller holds their entities' rows first (recordTargets, lockEntities): one
 * lock order, an entity before what hangs off it, as the entity's deletion takes them (its trigger
 * clears the record's value).
 */
export async function claimRequirementRecords(tx: Tx, batchId: string, rows: readonly number[]): Promise<ClaimedRecord[]> {
  const found = await tx.query<{ row_number: number; business_id: string; target_entity_id: string | null; requirement_slug: string; value: string | null }>(
    `SELECT r.row_number, b.business_id, r.target_entity_id, r.requirement_slug, r.value FROM requirement_batch_records r
       JOIN requirement_batches b ON b.id = r.batch_id
      WHERE r.batch_id = $1 AND r.row_number = ANY ($2::int[]) AND r.status = 'pending' AND b.status IN ('pending', 'in_progress')
      ORDER BY r.row_number FOR UPDATE OF r`,
    [batchId, rows],
  );
  return found.map((r) => ({
    rowNumber: Number(r.row_number),
    businessId: String(r.business_id),
    targetEntityId: r.target_entity_id,
    requirementSlug: String(r.requirement_slug),
    value: r.value,
  }));
}

/** A handled record: succeeded (what it did; its value now lives with the entity) or failed (why). */
export type RecordHandled =
  | { status: 'succeeded'; outcome: 'decided' | 'waiting' | 'stored'; submissionId: string | null; wake: boolean }
  | { status: 'failed'; failure: RecordFailure; retryable: boolean };

/** Moves claimed records to their final state, in one statement. */
export async function finishRequirementRecords(tx: Tx, batchId: string, handled: readonly (RecordHandled & { rowNumber: number })[]): Promise<void> {
  if (handled.length === 0) return;
  const ok = (h: RecordHandled) => (h.status === 'succeeded' ? h : null);
  const bad = (h: RecordHandled) => (h.status === 'failed' ? h : null);
  await tx.query(
    `UPDATE requirement_batch_records r SET status = u.status, outcome = u.outcome, submission_id = u.submission_id, wake = coalesce(u.wake, r.wake),
            value = CASE WHEN u.status = 'succeeded' THEN NULL ELSE r.value END,
            error_category = u.category, error_message = u.message, error_path = u.path, retryable = coalesce(u.retryable, r.retryable), updated_at = now()
       FROM unnest($2::int[], $3::text[], $4::text[], $5::uuid[], $6::bool[], $7::text[], $8::text[], $9::text[], $10::bool[])
            AS u(row_number, status, outcome, submission_id, wake, category, message, path, retryable)
      WHERE r.batch_id = $1 AND r.row_number = u.row_number`,
    [
      batchId,
      handled.map((h) => h.rowNumber),
      handled.map((h) => h.status),
      handled.map((h) => ok(h)?.outcome ?? null),
      handled.map((h) => ok(h)?.submissionId ?? null),
      handled.map((h) => ok(h)?.wake ?? null),
      handled.map((h) => bad(h)?.failure.category ?? null),
      handled.map((h) => bad(h)?.failure.message ?? null),
      handled.map((h) => bad(h)?.failure.path ?? null),
      handled.map((h) => bad(h)?.retryable ?? null),
    ],
  );
}

/**
 * What the records among `rows` that committed leave to tell (telling again is harmless): the
 * workflows of the submissions they left waiting or ended, and the people they decided (KYB
 * submissions waiting on them). Read from the records, so a step run again after a crash tells
 * what its first attempt committed but could not tell.
 */
export async function recordsToTell(
  db: Queryable,
  batchId: string,
  rows: readonly number[],
): Promise<{ wake: { submissionId: string; entityId: string; deadlineAt: string; businessId: string }[]; decided: string[] }> {
  const found = await db.query<{ submission_id: string; entity_id: string; deadline_at: string; business_id: string; wake: boolean; outcome: string }>(
    `SELECT s.id AS submission_id, s.entity_id, s.deadline_at, s.business_id, r.wake, r.outcome FROM requirement_batch_records r
       JOIN ukyc_submissions s ON s.id = r.submission_id
      WHERE r.batch_id = $1 AND r.row_number = ANY($2::int[]) AND (r.wake OR r.outcome = 'decided')`,
    [batchId, rows],
  );
  return {
    wake: found
      .filter((r) => r.wake)
      .map((r) => ({
        submissionId: String(r.submission_id),
        entityId: String(r.entity_id),
        deadlineAt: iso(r.deadline_at),
        businessId: String(r.business_id),
      })),
    decided: found.filter((r) => r.outcome === 'decided').map((r) => String(r.entity_id)),
  };
}

/** The entities of the business that the records name, by id and by externalId (one query). */
export async function entitiesNamed(
  db: Queryable,
  businessId: string,
  ids: readonly string[],
  externalIds: readonly string[],
): Promise<{ byId: Map<string, EntityNamed>; byExternalId: Map<string, EntityNamed> }> {
  const rows = await db.query<{ id: string; external_id: string; type: EntityNamed['type']; card_processor_public_token: string | null }>(
    `SELECT id, external_id, type, card_processor_public_token FROM entities
      WHERE business_id = $1 AND (id = ANY($2::uuid[]) OR external_id = ANY($3::text[]))`,
    [businessId, ids, externalIds],
  );
  const byId = new Map<string, EntityNamed>();
  const byExternalId = new Map<string, EntityNamed>();
  for (const r of rows) {
    const e = { id: String(r.id), type: r.type };
    byId.set(e.id, e);
    byExternalId.set(String(r.external_id), e);
  }
  return { byId, byExternalId };
}

export type EntityNamed = { id: string; type: 'INDIVIDUAL' | 'BUSINESS' };
