// Universal KYB: a business entity's profile and declared owners, its documents and its owners'
// documents (file metadata; the bytes are in the file store), and its submissions, each settled
// once. Writes lock the business entity's row, so one business entity's steps happen one at a time
// across API processes and activities. Locks are always taken in one order — the entity, then its
// submission — so two writers never wait on each other in a circle.
import { randomUUID } from 'node:crypto';
import { KYB_DOCUMENT_SLUGS, KYB_PROFILE_SLUG, OWNER_DOCUMENT_SLUG, type KybStatus } from '../domain/kyb.ts';
import type { LiveFile } from '../domain/kyb-manifest.ts';
import type { Decision } from '../domain/reliance.ts';
import { recordAudit } from './audit-log.ts';
import { iso, type Db, type Queryable, type Tx } from './db.ts';
import { lockEntity, recordEntityCreated, recordMemberChange } from './entities.ts';
import { insertFileRow, retireFilesOfKind, type StoredFile } from './files.ts';

/** An owner as the profile declares it: the person's details are kept on the membership. */
export type DeclaredOwner = { externalId: string; role: string; ownershipPercentage: number; details: Record<string, unknown> };
export type OwnerRef = { entityId: string; externalId: string | null };

/** Why a profile could not be saved: an owner's externalId names a BUSINESS entity (index in the list). */
export type ProfileProblem = { problem: 'owner-is-business'; index: number } | { problem: 'exists' } | { problem: 'missing' };

export type SavedProfile = { status: KybStatus; owners: OwnerRef[]; supersededSubmissionId: string | null };

/**
 * Creates the profile, or changes the existing one (`business` builds the new business part from
 * the current one). Saves the profile's business part and (when given) replaces the declared owners, each an
 * INDIVIDUAL entity of the business found by externalId or created. A change supersedes a
 * submission that is waiting (its workflow ends without a decision; the caller records its stage:
 * onboarding/kyb-profiles.ts) and leaves the profile DRAFT. In the caller's transaction.
 */
export async function saveProfileIn(
  tx: Tx,
  p: { mode: 'create' | 'change'; businessId: string; entityId: string; business: (current: unknown) => unknown; owners: readonly DeclaredOwner[] | undefined },
): Promise<SavedProfile | ProfileProblem> {
  await lockEntity(tx, p.entityId);
  const [existing] = await tx.query<{ profile: unknown }>('SELECT profile FROM kyb_profiles WHERE entity_id = $1', [p.entityId]);
  if (p.mode === 'create' && existing) return { problem: 'exists' };
  if (p.mode === 'change' && !existing) return { problem: 'missing' };
  const business = p.business(existing?.profile);
  if (p.owners) {
    const ids: string[] = [];
    for (const [index, o] of p.owners.entries()) {
      const [created] = await tx.query<{ id: string }>(
        "INSERT INTO entities (id, business_id, external_id, type) VALUES ($1, $2, $3, 'INDIVIDUAL') " +
          'ON CONFLICT (business_id, external_id) WHERE sealed_at IS NULL DO NOTHING RETURNING id',
        [randomUUID(), p.businessId, o.externalId],
      );
      if (created) recordEntityCreated(tx, p.businessId, String(created.id), o.externalId, 'INDIVIDUAL');
      const [row] = await tx.query<{ id: string; type: string }>('SELECT id, type FROM entities WHERE business_id = $1 AND external_id = $2', [
        p.businessId,
        o.externalId,
      ]);
      if (row!.type !== 'INDIVIDUAL') return { problem: 'owner-is-business', index };
      ids.push(String(row!.id));
    }
    const before = await tx.query<{ member_entity_id: string; role: string }>(
      'DELETE FROM entity_members WHERE business_entity_id = $1 RETURNING member_entity_id, role',
      [p.entityId],
    );
    for (const [index, o] of p.owners.entries()) {
      await tx.query(
        'INSERT INTO entity_members (business_entity_id, member_entity_id, role, ownership_percent,' +
          ' external_id, declared, position) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [p.entityId, ids[index], o.role, o.ownershipPercentage, o.externalId, JSON.stringify(o.details), index],
      );
    }
    // the links that changed: an owner newly declared (or under another role), an owner left out
    const link = (memberId: string, role: string) => `${memberId} ${role}`;
    const was = new Set(before.map((m) => link(String(m.member_entity_id), m.role)));
    const is = new Set(p.owners.map((o, index) => link(ids[index]!, o.role)));
    for (const [index, o] of p.owners.entries()) {
      if (!was.has(link(ids[index]!, o.role)))
        recordMemberChange(tx, { businessId: p.businessId, businessEntityId: p.entityId, memberId: ids[index]!, role: o.role }, 'member.declared');
    }
    for (const m of before) {
      if (!is.has(link(String(m.member_entity_id), m.role)))
        recordMemberChange(
          tx,
          { businessId: p.businessId, businessEntityId: p.entityId, memberId: String(m.member_entity_id), role: m.role },
          'member.removed',
        );
    }
  }
  await tx.query(
    `INSERT INTO kyb_profiles (entity_id, business_id, profile) VALUES ($1, $2, $3)
     ON CONFLICT (entity_id) DO UPDATE SET profile = EXCLUDED.profile, status = 'DRAFT', updated_at = now()`,
    [p.entityId, p.businessId, JSON.stringify(business)],
  );
  // every version kept: a KYB decision names the one it rested on (migration 027)
  await tx.query('INSERT INTO record_kyb_profile_versions (entity_id, profile) VALUES ($1, $2)', [p.entityId, JSON.stringify(business)]);
  recordAudit(tx, {
    businessId: p.businessId,
    action: 'kyb.profile_saved',
    entityId: p.entityId,
    subject: { type: 'kyb_profile', id: p.entityId },
    details: { mode: p.mode, owners: p.owners ? p.owners.length : null },
    keyed: { profile: business },
  });
  await tx.query(
    "UPDATE entity_requirements SET status = 'SUPERSEDED', updated_at = now() WHERE entity_id = $1 AND requirement_slug = $2 AND status <> 'SUPERSEDED'",
    [p.entityId, KYB_PROFILE_SLUG],
  );
  await tx.query('INSERT INTO entity_requirements (id, entity_id, requirement_slug, value) VALUES ($1, $2, $3, $4)', [
    randomUUID(),
    p.entityId,
    KYB_PROFILE_SLUG,
    JSON.stringify(business),
  ]);
  const [superseded] = await tx.query<{ id: string }>(
    "UPDATE kyb_submissions SET status = 'superseded', settled_at = now() WHERE entity_id = $1 AND status = 'waiting' RETURNING id",
    [p.entityId],
  );
  return { status: 'DRAFT' as const, owners: await declaredOwners(tx, p.entityId), supersededSubmissionId: superseded ? String(superseded.id) : null };
}

/** The profile of a business entity of the business, or null when none was saved. */
export async function loadProfile(
  db: Queryable,
  businessId: string,
  entityId: string,
): Promise<{ business: unknown; status: KybStatus; owners: OwnerRef[] } | null> {
  const [row] = await db.query<{ profile: unknown; status: KybStatus }>('SELECT profile, status FROM kyb_profiles WHERE entity_id = $1 AND business_id = $2', [
    entityId,
    businessId,
  ]);
  if (!row) return null;
  return { business: row.profile, status: row.status, owners: await declaredOwners(db, entityId) };
}

/** The declared owners (members) of a business entity, in declaration order. */
export async function declaredOwners(db: Queryable, entityId: string): Promise<OwnerRef[]> {
  const rows = await db.query<{ member_entity_id: string; external_id: string | null; entity_external_id: string }>(
    `SELECT m.member_entity_id, m.external_id, e.external_id AS entity_external_id FROM entity_members m JOIN entities e ON e.id = m.member_entity_id
      WHERE m.business_entity_id = $1 ORDER BY m.position, m.created_at, m.member_entity_id`,
    [entityId],
  );
  return rows.map((r) => ({ entityId: String(r.member_entity_id), externalId: r.external_id ?? r.entity_external_id }));
}

/** The live KYB files of the business entity (its documents) and of the given owners (their documents). */
export async function liveKybFiles(db: Queryable, entityId: string, ownerIds: readonly string[]): Promise<LiveFile[]> {
  const rows = await db.query<{
    id: string;
    entity_id: string;
    slug: string;
    document_type: string | null;
    file_name: string | null;
    content_type: string;
    size: number;
    uploaded_at: string;
  }>(
    `SELECT id, entity_id, slug, document_type, file_name, content_type, size, uploaded_at FROM files
      WHERE retired_at IS NULL AND ((entity_id = $1 AND slug = ANY ($2)) OR (entity_id = ANY ($3::uuid[]) AND slug = $4))`,
    [entityId, KYB_DOCUMENT_SLUGS, ownerIds, OWNER_DOCUMENT_SLUG],
  );
  return rows.map((r) => ({
    fileId: String(r.id),
    entityId: String(r.entity_id),
    slug: r.slug,
    documentType: r.document_type,
    fileName: r.file_name,
    contentType: r.content_type,
    size: Number(r.size),
    uploadedAt: iso(r.uploaded_at),
  }));
}

/**
 * Records KYB files whose bytes are in the file store: a business's documents under their slug
 * (they accumulate, each also a FILE requirement of the entity), or an owner's documents of one
 * kind on the owner's entity (earlier live files of that kind are retired).
 */
export async function recordKybFiles(
  db: Db,
  u: { businessId: string; businessEntityId: string; target: { entityId: string; slug: string; documentType: string | null }; files: readonly StoredFile[] },
): Promise<{ uploadedAt: string } | 'entity-gone'> {
  return db.tx(async (tx) => {
    const { entityId, slug, documentType } = u.target;
    // the business entity and, for an owner's document, the owner: either may have been deleted while the bytes were stored
    if (!(await lockEntity(tx, u.businessEntityId)) || (entityId !== u.businessEntityId && !(await lockEntity(tx, entityId)))) return 'entity-gone';
    if (documentType !== null) {
      await retireFilesOfKind(tx, entityId, slug, documentType);
    }
    let uploadedAt = '';
    for (const f of u.files) {
      uploadedAt = await insertFileRow(tx, f, { businessId: u.businessId, entityId, slug, documentType });
      if (documentType === null) {
        await tx.query('INSERT INTO entity_requirements (id, entity_id, requirement_slug, value, file_id) VALUES ($1, $2, $3, $4, $5)', [
          randomUUID(),
          entityId,
          slug,
          JSON.stringify({ fileName: f.fileName, contentType: f.contentType, size: f.size }),
          f.id,
        ]);
      }
    }
    return { uploadedAt };
  });
}

export type KybSubmissionRef = { submissionId: string; deadlineAt: string; opened: boolean };

/**
 * Opens a submission for the profile's current owners, or returns the one waiting (submitting
 * again without a change is the same submission). The profile goes IN_REVIEW.
 */
export async function openKybSubmission(db: Db, s: { businessId: string; entityId: string; deadlineSeconds: number }): Promise<KybSubmissionRef> {
  return db.tx(async (tx) => {
    await lockEntity(tx, s.entityId);
    const [open] = await tx.query<{ id: string; deadline_at: string }>(
      "SELECT id, deadline_at FROM kyb_submissions WHERE entity_id = $1 AND status = 'waiting'",
      [s.entityId],
    );
    if (open) return { submissionId: String(open.id), deadlineAt: iso(open.deadline_at), opened: false };
    const owners = (await declaredOwners(tx, s.entityId)).map((o) => o.entityId);
    const id = randomUUID();
    const [row] = await tx.query<{ deadline_at: string }>(
      'INSERT INTO kyb_submissions (id, business_id, entity_id, owners, deadline_at) VALUES ($1, ' +
        '$2, $3, $4, now() + make_interval(secs => $5)) RETURNING deadline_at',
      [id, s.businessId, s.entityId, owners, s.deadlineSeconds],
    );
    await tx.query("UPDATE kyb_profiles SET status = 'IN_REVIEW', updated_at = now() WHERE entity_id = $1", [s.entityId]);
    recordAudit(tx, {
      businessId: s.businessId,
      action: 'kyb.submitted',
      entityId: s.entityId,
      subject: { type: 'submission', id },
      details: { submissionId: id, owners: owners.length },
    });
    return { submissionId: id, deadlineAt: iso(row!.deadline_at), opened: true };
  });
}

export type KybSubmissionState = {
  businessId: string;
  entityId: string;
  owners: string[];
  status: 'waiting' | 'decided' | 'expired' | 'superseded';
  createdAt: string;
  deadlineAt: string;
};

/**
 * The submission as its settling reads it; `lock` holds its business entity and then it (the one
 * lock order) for the caller's transaction, and reads it under the locks.
 */
export async function loadKybSubmission(db: Queryable, submissionId: string, lock = false): Promise<KybSubmissionState | null> {
  if (lock) {
    const [of] = await db.query<{ entity_id: string }>('SELECT entity_id FROM kyb_submissions WHERE id = $1', [submissionId]);
    if (!of || !(await lockEntity(db, of.entity_id))) return null;
  }
  const [s] = await db.query<{
    business_id: string;
    entity_id: string;
    owners: string[];
    status: KybSubmissionState['status'];
    created_at: string;
    deadline_at: string;
  }>(`SELECT business_id, entity_id, owners, status, created_at, deadline_at FROM kyb_submissions WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [submissionId]);
  if (!s) return null;
  return {
    businessId: s.business_id,
    entityId: s.entity_id,
    owners: s.owners.map(String),
    status: s.status,
    createdAt: iso(s.created_at),
    deadlineAt: iso(s.deadline_at),
  };
}

/** Each owner's latest KYC decision (whichever path made it), or null when it has none. */
export async function latestOwnerDecisions(db: Queryable, ownerIds: readonly string[]): Promise<Map<string, Decision>> {
  if (ownerIds.length === 0) return new Map();
  const rows = await db.query<{
    entity_id: string;
    decision: 'APPROVED' | 'REJECTED';
    reject_labels: string[];
    review_reject_type: 'RETRY' | 'FINAL' | null;
    moderation_comment: string | null;
  }>(
    `SELECT DISTINCT ON (entity_id) entity_id, decision, reject_labels, review_reject_type, moderation_comment FROM kyc_accounts
      WHERE entity_id = ANY ($1::uuid[]) ORDER BY entity_id, decided_at DESC, created_at DESC`,
    [ownerIds],
  );
  return new Map(
    rows.map((r): [string, Decision] => [
      String(r.entity_id),
      r.decision === 'APPROVED'
        ? { status: 'APPROVED' }
        : {
            status: 'REJECTED',
            rejectLabels: r.reject_labels,
            reviewRejectType: r.review_reject_type ?? 'RETRY',
            moderationComment: r.moderation_comment ?? 'not verified',
          },
    ]),
  );
}

export type WaitingSubmission = { submissionId: string; entityId: string; deadlineAt: string; businessId: string };
const waiting = (r: { id: string; entity_id: string; deadline_at: string; business_id: string }): WaitingSubmission => ({
  submissionId: String(r.id),
  entityId: String(r.entity_id),
  deadlineAt: iso(r.deadline_at),
  businessId: String(r.business_id),
});

/** Waiting submissions that name this owner (to wake when the owner is decided). */
export async function waitingSubmissionsOfOwners(db: Queryable, ownerIds: readonly string[]): Promise<{ submission: WaitingSubmission; ownerId: string }[]> {
  const rows = await db.query<{ id: string; entity_id: string; deadline_at: string; business_id: string; owner_id: string }>(
    `SELECT s.id, s.entity_id, s.deadline_at, s.business_id, o.id AS owner_id FROM kyb_submissions s, unnest(s.owners) AS o(id)
      WHERE s.status = 'waiting' AND s.owners && $1::uuid[] AND o.id = ANY ($1::uuid[])`,
    [ownerIds],
  );
  return rows.map((r) => ({ submission: waiting(r), ownerId: String(r.owner_id) }));
}

/**
 * Waiting submissions older than `graceMs` that should have been settled by now: every owner has a
 * decision, or the deadline has passed. A live workflow settles these within seconds; these have
 * lost their wake (a crash between an owner's decision and its signal) or their workflow.
 */
export async function overdueWaitingSubmissions(db: Queryable, graceMs: number): Promise<WaitingSubmission[]> {
  const rows = await db.query<{ id: string; entity_id: string; deadline_at: string; business_id: string }>(
    `SELECT s.id, s.entity_id, s.deadline_at, s.business_id FROM kyb_submissions s
      WHERE s.status = 'waiting' AND s.created_at < now() - make_interval(secs => $1)
        AND (s.deadline_at < now() - make_interval(secs => $1)
             OR NOT EXISTS (SELECT 1 FROM unnest(s.owners) AS o(id) WHERE NOT EXISTS (SELECT 1 FROM kyc_accounts k WHERE k.entity_id = o.id)))
      ORDER BY s.created_at LIMIT 500`,
    [graceMs / 1000],
  );
  return rows.map(waiting);
}

/** Closes the submission with its decision: the profile's status, and the entity's PENDING KYB requirements. */
export async function settleKybSubmission(
  db: Queryable,
  submissionId: string,
  s: { entityId: string; status: 'decided' | 'expired'; decision: 'APPROVED' | 'REJECTED'; eventId: string },
): Promise<void> {
  await db.query('UPDATE kyb_submissions SET status = $2, decision = $3, event_id = $4, settled_at = now() WHERE id = $1', [
    submissionId,
    s.status,
    s.decision,
    s.eventId,
  ]);
  await db.query('UPDATE kyb_profiles SET status = $2, updated_at = now() WHERE entity_id = $1', [s.entityId, s.decision]);
  await db.query(
    'UPDATE entity_requirements SET status = $2, updated_at = now() WHERE entity_id = $1 AND ' +
      "status = 'PENDING' AND (requirement_slug = $3 OR requirement_slug = ANY ($4))",
    [s.entityId, s.decision, KYB_PROFILE_SLUG, KYB_DOCUMENT_SLUGS],
  );
}

/** The latest submission of a business entity (for operators and the profile's readers). */
export async function latestKybSubmission(db: Queryable, entityId: string): Promise<{ submissionId: string; status: string; deadlineAt: string } | null> {
  const [row] = await db.query<{ id: string; status: string; deadline_at: string }>(
    'SELECT id, status, deadline_at FROM kyb_submissions WHERE entity_id = $1 ORDER BY created_at DESC LIMIT 1',
    [entityId],
  );
  return row ? { submissionId: String(row.id), status: row.status, deadlineAt: iso(row.deadline_at) } : null;
}
