// Universal KYC submissions and uploaded files. A person's submission opens with the canonical KYC
// data (newer data in an open submission supersedes older), claims the files uploaded before it,
// gathers those uploaded while it is open, and is settled once: decided, or decided as incomplete
// when its deadline passes. Each write locks the person's entity row, so the steps of one person
// happen one at a time across API processes and activities.
import { randomUUID } from 'node:crypto';
import { CANONICAL_KYC_SLUG, ID_DOCUMENT_SLUG, UKYC_FILE_SLUGS } from '../domain/universal-kyc.ts';
import { recordAudit } from './audit-log.ts';
import type { Db, Queryable, Tx } from './db.ts';
import { lockEntity } from './entities.ts';
import { insertFileRow, type StoredFile } from './files.ts';

export type OpenSubmission = { submissionId: string; deadlineAt: string };
type SubmittedData = { businessId: string; entityId: string; value: string; deadlineSeconds: number };
/** The open submission the data went into: whether this opened it, and the submission as the transaction leaves it (its person locked). */
type SubmissionOpened = OpenSubmission & { opened: boolean; idDocuments: number; state: SubmissionState };

const iso = (v: unknown) => new Date(v as string).toISOString();

/** The person's open submission ($1: the person). */
const OPEN_SUBMISSION = "SELECT id, deadline_at, created_at FROM ukyc_submissions WHERE entity_id = $1 AND status = 'waiting'";
/** How many live identity document files a submission holds ($1: the submission, $2: ID_DOCUMENT_SLUG); it is complete once it has one. */
const ID_DOCUMENTS = 'SELECT count(*) FROM files WHERE submission_id = $1 AND slug = $2 AND retired_at IS NULL';

async function openSubmission(db: Queryable, entityId: string): Promise<OpenSubmission | null> {
  const [row] = await db.query<{ id: string; deadline_at: string }>(OPEN_SUBMISSION, [entityId]);
  return row ? { submissionId: row.id, deadlineAt: iso(row.deadline_at) } : null;
}

/**
 * Records the canonical KYC data in the person's open submission (one is opened when there is none);
 * returns it, with its identity document files as this transaction leaves them (the caller need not load it again).
 */
export function submitCanonicalData(db: Db, s: SubmittedData): Promise<SubmissionOpened | 'entity-gone'> {
  return db.tx((tx) => submitCanonicalDataIn(tx, s));
}

/** submitCanonicalData in the caller's transaction (a requirement batch's record). */
export async function submitCanonicalDataIn(tx: Tx, s: SubmittedData): Promise<SubmissionOpened | 'entity-gone'> {
  if (!(await lockEntity(tx, s.entityId))) return 'entity-gone';
  // the person's open submission, or a new one (the person's lock keeps a second from opening meanwhile)
  const [row] = await tx.query<{ id: string; deadline_at: string; created_at: string; opened: boolean }>(
    `WITH found AS (${OPEN_SUBMISSION}),
     made AS (
       INSERT INTO ukyc_submissions (id, business_id, entity_id, deadline_at)
       SELECT $2, $3, $1, now() + make_interval(secs => $4) WHERE NOT EXISTS (SELECT 1 FROM found)
       RETURNING id, deadline_at, created_at)
     SELECT *, false AS opened FROM found UNION ALL SELECT *, true AS opened FROM made`,
    [s.entityId, randomUUID(), s.businessId, s.deadlineSeconds],
  );
  const open = { submissionId: String(row!.id), deadlineAt: iso(row!.deadline_at), createdAt: iso(row!.created_at) };
  const opened = row!.opened;
  // In one statement: the data supersedes the submission's pending data; the files uploaded before it
  // (and their requirements) join the submission; and how many identity documents it holds now (a
  // statement's parts see the rows as they were before it, so the files it attaches are counted apart).
  const [docs] = await tx.query<{ id_documents: string }>(
    `WITH superseded AS (
       UPDATE entity_requirements SET status = 'SUPERSEDED', updated_at = now() WHERE submission_id = $1 AND requirement_slug = $3 AND status = 'PENDING'),
     added AS (INSERT INTO entity_requirements (id, entity_id, requirement_slug, value, submission_id) VALUES ($4, $5, $3, $6, $1)),
     attached AS (
       UPDATE files SET submission_id = $1 WHERE entity_id = $5 AND submission_id IS NULL AND retired_at IS NULL AND slug = ANY ($7) RETURNING slug),
     joined AS (
       UPDATE entity_requirements SET submission_id = $1 WHERE entity_id = $5 AND submission_id IS NULL AND status = 'PENDING' AND requirement_slug = ANY ($7))
     SELECT (${ID_DOCUMENTS}) + (SELECT count(*) FROM attached WHERE slug = $2) AS id_documents`,
    [open.submissionId, ID_DOCUMENT_SLUG, CANONICAL_KYC_SLUG, randomUUID(), s.entityId, JSON.stringify(s.value), UKYC_FILE_SLUGS],
  );
  recordAudit(tx, {
    businessId: s.businessId,
    action: 'ukyc.submitted',
    entityId: s.entityId,
    subject: { type: 'submission', id: open.submissionId },
    details: { submissionId: open.submissionId, opened },
    keyed: { payload: s.value },
  });
  const idDocuments = Number(docs!.id_documents);
  const { createdAt, ...submission } = open;
  const state: SubmissionState = {
    businessId: s.businessId,
    entityId: s.entityId,
    status: 'waiting',
    createdAt,
    deadlineAt: open.deadlineAt,
    data: s.value,
    idDocuments,
  };
  return { ...submission, opened, idDocuments, state };
}

/** Records uploaded files (their bytes already in the file store) as FILE requirements, in the open submission if there is one. */
export async function recordUploadedFiles(
  db: Db,
  u: { businessId: string; entityId: string; slug: string; files: readonly StoredFile[] },
): Promise<{ submission: OpenSubmission | null; uploadedAt: string } | 'entity-gone'> {
  return db.tx(async (tx) => {
    if (!(await lockEntity(tx, u.entityId))) return 'entity-gone'; // deleted while the bytes were stored
    const open = await openSubmission(tx, u.entityId);
    let uploadedAt = '';
    for (const f of u.files) {
      uploadedAt = await insertFileRow(tx, f, { businessId: u.businessId, entityId: u.entityId, slug: u.slug, submissionId: open?.submissionId ?? null });
      await tx.query('INSERT INTO entity_requirements (id, entity_id, requirement_slug, value, submission_id, file_id) VALUES ($1, $2, $3, $4, $5, $6)', [
        randomUUID(),
        u.entityId,
        u.slug,
        JSON.stringify({ fileName: f.fileName, contentType: f.contentType, size: f.size }),
        open?.submissionId ?? null,
        f.id,
      ]);
    }
    return { submission: open, uploadedAt };
  });
}

/** How many live identity document files the submission holds (ID_DOCUMENTS). */
async function identityDocuments(db: Queryable, submissionId: string): Promise<number> {
  const [docs] = await db.query<{ count: string }>(ID_DOCUMENTS, [submissionId, ID_DOCUMENT_SLUG]);
  return Number(docs?.count ?? 0);
}

export type SubmissionState = {
  businessId: string;
  entityId: string;
  status: 'waiting' | 'decided' | 'expired';
  createdAt: string;
  deadlineAt: string;
  /** The latest canonical KYC data (a JSON string), null when there is none. */
  data: string | null;
  idDocuments: number;
};

/**
 * The submission as its settling reads it; `lock` holds its person and then it (the one lock order,
 * as every write here takes them) for the caller's transaction, and reads it under the locks.
 */
export async function loadSubmission(db: Queryable, submissionId: string, lock = false): Promise<SubmissionState | null> {
  if (lock) {
    const [of] = await db.query<{ entity_id: string }>('SELECT entity_id FROM ukyc_submissions WHERE id = $1', [submissionId]);
    if (!of || !(await lockEntity(db, of.entity_id))) return null;
  }
  const [s] = await db.query<{ business_id: string; entity_id: string; status: SubmissionState['status']; created_at: string; deadline_at: string }>(
    `SELECT business_id, entity_id, status, created_at, deadline_at FROM ukyc_submissions WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [submissionId],
  );
  if (!s) return null;
  const [data] = await db.query<{ value: string }>(
    "SELECT value FROM entity_requirements WHERE submission_id = $1 AND requirement_slug = $2 AND status <> 'SUPERSEDED' ORDER BY created_at DESC LIMIT 1",
    [submissionId, CANONICAL_KYC_SLUG],
  );
  return {
    businessId: s.business_id,
    entityId: s.entity_id,
    status: s.status,
    createdAt: iso(s.created_at),
    deadlineAt: iso(s.deadline_at),
    data: data ? String(data.value) : null,
    idDocuments: await identityDocuments(db, submissionId),
  };
}

/** Closes the submission with its decision and moves its PENDING requirements to the decision's status. */
export async function settleSubmission(
  db: Queryable,
  submissionId: string,
  s: { status: 'decided' | 'expired'; decision: 'APPROVED' | 'REJECTED'; eventId: string },
): Promise<void> {
  await db.query(
    `WITH settled AS (UPDATE ukyc_submissions SET status = $2, decision = $3, event_id = $4, settled_at = now() WHERE id = $1)
     UPDATE entity_requirements SET status = $3, updated_at = now() WHERE submission_id = $1 AND status = 'PENDING'`,
    [submissionId, s.status, s.decision, s.eventId],
  );
}
