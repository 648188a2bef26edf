// What `vouch trace` reads for an operator (issue 21), beyond an entity's history
// (store/entity-history.ts) and its audit entries (store/audit-log.ts): the entity record, sealed
// or not, found by id or by any business's externalId; its decisions WITH their outcome and rule
// labels (an operator may see them; no API read returns them); the ids of the workflow runs that
// work for it; what is still pending; and a batch with its rows. Reads only.
import { iso, readAll, type Queryable, type Row } from './db.ts';
import { keptDecisions } from './kept-decisions.ts';

const isoOrNull = (v: unknown): string | null => (v == null ? null : iso(v));
const str = (v: unknown): string | null => (v == null ? null : String(v));

export type EntityRecord = {
  id: string;
  businessId: string;
  businessName: string;
  externalId: string;
  type: 'INDIVIDUAL' | 'BUSINESS';
  verifiedBy: string | null;
  createdAt: string;
  updatedAt: string;
  /** Set when its relationship ended under a retention policy (or a hold): gone from the API, kept until purgeAfter. */
  sealedAt: string | null;
  purgeAfter: string | null;
};

const RECORD = `SELECT e.*, b.name AS business_name FROM entity_records e JOIN businesses b ON b.id = e.business_id`;

const toRecord = (r: Row): EntityRecord => ({
  id: String(r.id),
  businessId: String(r.business_id),
  businessName: String(r.business_name),
  externalId: String(r.external_id),
  type: r.type as EntityRecord['type'],
  verifiedBy: str(r.verified_by),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  sealedAt: isoOrNull(r.sealed_at),
  purgeAfter: isoOrNull(r.purge_after),
});

export async function entityRecord(db: Queryable, id: string): Promise<EntityRecord | null> {
  const [row] = await db.query(`${RECORD} WHERE e.id = $1`, [id]);
  return row ? toRecord(row) : null;
}

/** Every record with this externalId — of every business (or one), sealed ones too — oldest first. */
export async function entityRecordsByExternalId(db: Queryable, externalId: string, businessId?: string): Promise<EntityRecord[]> {
  const rows = businessId
    ? await db.query(`${RECORD} WHERE e.external_id = $1 AND e.business_id = $2 ORDER BY e.created_at, e.id`, [externalId, businessId])
    : await db.query(`${RECORD} WHERE e.external_id = $1 ORDER BY e.created_at, e.id`, [externalId]);
  return rows.map(toRecord);
}

/** A decision as an operator reads it: the outcome, the rules that refused, where it came from, the event that carried it. */
export type TracedDecision = {
  /** The decision's id (its decision.recorded entry's subject). */
  id: string;
  path: string;
  /** The KYC account's source (`batch`, `sync`, `hosted-sdk`, `universal-kyc`) and its reference, or the KYB submission. */
  source: string;
  sourceRef: string;
  provider: string | null;
  applicantId: string | null;
  levelName: string | null;
  decision: 'APPROVED' | 'REJECTED';
  rejectLabels: string[];
  reviewRejectType: string | null;
  moderationComment: string | null;
  /** The rule set that made it (`unrecorded` for decisions made before rule sets were recorded). */
  rules: string;
  decidedAt: string;
  /** The event that carried it to the client (account_status_change or kyb_status_change). */
  eventId: string | null;
};

/** Every decision of the entity, oldest first (each is kept: migration 027), KYC and KYB alike. */
export async function decisionsOf(db: Queryable, entityId: string): Promise<TracedDecision[]> {
  return (await keptDecisions(db, [entityId])).map((d) => ({
    id: d.id,
    path: d.path,
    source: d.source,
    sourceRef: d.sourceRef,
    provider: d.provider,
    applicantId: d.applicantId,
    levelName: d.levelName,
    decision: d.decision,
    rejectLabels: d.rejectLabels,
    reviewRejectType: d.reviewRejectType,
    moderationComment: d.moderationComment,
    rules: d.rules,
    decidedAt: d.decidedAt,
    eventId: d.eventId,
  }));
}

/** What the workflows that work for an entity are started for: the ids their workflow ids are made of. */
export type RunSubjects = {
  batches: { batchId: string; runs: number }[];
  syncRequests: string[];
  ukycSubmissions: string[];
  kybSubmissions: string[];
  sandboxReviews: string[];
  /** Deliveries of its events that a retry workflow took over (in their current run). */
  retriedDeliveries: { deliveryId: string; run: number }[];
};

/**
 * The batch rows of an entity: those resolved to it, and the pending rows of unfinished batches of
 * its business that name it (by its externalId, or its id) and are not resolved yet. Parameters:
 * $1 the entity, $2 its business, $3 its externalId.
 */
const ROWS_OF_ENTITY = `
  SELECT r.batch_id, r.row_number, r.status FROM import_records r WHERE r.entity_id = $1
  UNION
  SELECT r.batch_id, r.row_number, r.status FROM import_records r JOIN import_batches b ON b.id = r.batch_id
   WHERE b.business_id = $2 AND b.status IN ('pending', 'in_progress') AND r.status = 'pending' AND r.external_id IN ($3, $1::text)`;

export async function runSubjects(db: Queryable, e: EntityRecord): Promise<RunSubjects> {
  const [batches, syncs, ukyc, kyb, sandbox, deliveries] = await readAll(db, [
    () =>
      db.query(`SELECT b.id, b.run FROM import_batches b WHERE b.id IN (SELECT batch_id FROM (${ROWS_OF_ENTITY}) x) ORDER BY b.created_at, b.id`, [
        e.id,
        e.businessId,
        e.externalId,
      ]),
    () => db.query('SELECT request_id FROM sync_imports WHERE entity_id = $1 ORDER BY created_at', [e.id]),
    () => db.query('SELECT id FROM ukyc_submissions WHERE entity_id = $1 ORDER BY created_at', [e.id]),
    () => db.query('SELECT id FROM kyb_submissions WHERE entity_id = $1 ORDER BY created_at', [e.id]),
    () => db.query('SELECT id FROM sandbox_reviews WHERE entity_id = $1 ORDER BY created_at', [e.id]),
    () =>
      db.query(
        `SELECT d.id, d.run FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
        WHERE ev.entity_id = $1 AND d.mode = 'workflow' ORDER BY d.created_at, d.id`,
        [e.id],
      ),
  ]);
  return {
    batches: batches.map((b) => ({ batchId: String(b.id), runs: Number(b.run) })),
    syncRequests: syncs.map((s) => String(s.request_id)),
    ukycSubmissions: ukyc.map((s) => String(s.id)),
    kybSubmissions: kyb.map((s) => String(s.id)),
    sandboxReviews: sandbox.map((s) => String(s.id)),
    retriedDeliveries: deliveries.map((d) => ({ deliveryId: String(d.id), run: Number(d.run) })),
  };
}

/** Who attempts a pending delivery next, by its mode (store/deliveries.ts). */
const ATTEMPTED_BY: Record<string, string> = {
  dispatcher: 'dispatcher',
  waiting: 'dispatcher, at its next retry slot',
  held: 'no one: its subscription is disabled',
  workflow: "retry workflow (an earlier release's)",
};

/** What is not finished for an entity: open submissions, batch rows and sync requests for it, deliveries of its events. */
export async function pendingOf(db: Queryable, e: EntityRecord) {
  const [ukyc, kyb, rows, syncs, deliveries] = await readAll(db, [
    () => db.query("SELECT id, created_at, deadline_at FROM ukyc_submissions WHERE entity_id = $1 AND status = 'waiting'", [e.id]),
    () => db.query("SELECT id, created_at, deadline_at, owners FROM kyb_submissions WHERE entity_id = $1 AND status = 'waiting'", [e.id]),
    () =>
      db.query(
        `SELECT x.batch_id, x.row_number, b.status AS batch_status FROM (${ROWS_OF_ENTITY}) x JOIN import_batches b ON b.id = x.batch_id
        WHERE x.status = 'pending' ORDER BY x.batch_id, x.row_number`,
        [e.id, e.businessId, e.externalId],
      ),
    () => db.query("SELECT request_id, created_at FROM sync_imports WHERE entity_id = $1 AND status = 'pending'", [e.id]),
    () =>
      db.query(
        `SELECT d.id, d.event_id, ev.event_type, d.subscription_id, d.mode, d.attempts, d.run_attempts, d.next_attempt_at, d.last_error
         FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
        WHERE ev.entity_id = $1 AND d.status = 'pending' ORDER BY d.next_attempt_at, d.id`,
        [e.id],
      ),
  ]);
  return {
    submissions: [
      ...ukyc.map((s) => ({ path: 'universal-kyc', submissionId: String(s.id), openedAt: iso(s.created_at), deadlineAt: iso(s.deadline_at) })),
      ...kyb.map((s) => ({
        path: 'universal-kyb',
        submissionId: String(s.id),
        openedAt: iso(s.created_at),
        deadlineAt: iso(s.deadline_at),
        owners: (s.owners as string[]).map(String),
      })),
    ],
    batchRows: rows.map((r) => ({ batchId: String(r.batch_id), rowNumber: Number(r.row_number), batchStatus: String(r.batch_status) })),
    syncImports: syncs.map((s) => ({ requestId: String(s.request_id), requestedAt: iso(s.created_at) })),
    deliveries: deliveries.map((d) => ({
      deliveryId: String(d.id),
      eventId: String(d.event_id),
      eventType: String(d.event_type),
      subscriptionId: String(d.subscription_id),
      state: Number(d.run_attempts) > 0 ? 'failing' : 'waiting',
      attemptedBy: ATTEMPTED_BY[String(d.mode)] ?? 'dispatcher',
      attempts: Number(d.attempts),
      nextAttemptAt: iso(d.next_attempt_at),
      lastError: str(d.last_error),
    })),
  };
}
export type Pending = Awaited<ReturnType<typeof pendingOf>>;

/** A batch as an operator reads it: the record, each row's state (a decided row's outcome too), and the entities it touched. */
export async function batchTrace(db: Queryable, batchId: string) {
  const [batch] = await db.query(`SELECT b.*, bu.name AS business_name FROM import_batches b JOIN businesses bu ON bu.id = b.business_id WHERE b.id = $1`, [
    batchId,
  ]);
  if (!batch) return null;
  const rows = await db.query(
    `SELECT row_number, external_id, status, entity_id, decision->>'status' AS decision, error_category, retryable, import_attempts
       FROM import_records WHERE batch_id = $1 ORDER BY row_number`,
    [batchId],
  );
  const counts: Record<string, number> = {};
  for (const r of rows) counts[String(r.status)] = (counts[String(r.status)] ?? 0) + 1;
  return {
    batch: {
      id: String(batch.id),
      businessId: String(batch.business_id),
      businessName: String(batch.business_name),
      status: String(batch.status),
      provider: String(batch.provider),
      totalRecords: Number(batch.total_records),
      successfulRecords: Number(batch.successful_records),
      failedRecords: Number(batch.failed_records),
      failureReason: str(batch.failure_reason),
      runs: Number(batch.run),
      contentSha256: String(batch.content_sha256),
      createdAt: iso(batch.created_at),
      startedAt: isoOrNull(batch.started_at),
      completedAt: isoOrNull(batch.completed_at),
      canceledAt: isoOrNull(batch.canceled_at),
    },
    rows: {
      counts,
      items: rows.map((r) => ({
        rowNumber: Number(r.row_number),
        externalId: String(r.external_id),
        status: String(r.status),
        entityId: str(r.entity_id),
        decision: str(r.status === 'succeeded' ? r.decision : null),
        errorCategory: str(r.error_category),
        retryable: r.retryable == null ? null : Boolean(r.retryable),
        importAttempts: Number(r.import_attempts),
      })),
    },
    entities: [...new Set(rows.flatMap((r) => (r.entity_id ? [String(r.entity_id)] : [])))],
  };
}
export type BatchTrace = NonNullable<Awaited<ReturnType<typeof batchTrace>>>;
