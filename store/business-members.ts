// Members of a BUSINESS entity beyond its declared owners, and the features assigned to them
// (domain/business-members.ts). Set-based: a call of 500 people is a handful of statements. Every
// write locks the business entity's row first, then (where access may move) its members' rows — the
// one lock order (store/entities.ts lockEntity) — and records its audit entries in its transaction.
// The writes that may move members' access (a member removed, a feature assigned or unassigned) run
// in their caller's transaction: onboarding/business-members.ts, which brings the access in line after.
import type { AssignableFeature, BusinessMemberRole } from '../domain/business-members.ts';
import { CARD_ISSUANCE_EVENT } from '../domain/events.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';
import { recordAudit } from './audit-log.ts';
import { iso, type Db, type Queryable, type Tx } from './db.ts';
import { lockMembers } from './member-feature-access.ts';

export type EntityKind = 'INDIVIDUAL' | 'BUSINESS';

/** Locks the business entity of the business; its type, or undefined when there is none. */
async function lockBusinessEntity(db: Queryable, businessId: string, entityId: string): Promise<EntityKind | undefined> {
  const [row] = await db.query<{ type: EntityKind }>('SELECT type FROM entities WHERE id = $1 AND business_id = $2 FOR UPDATE', [entityId, businessId]);
  return row?.type;
}

/** Why a write did not happen: the business entity is missing or not a BUSINESS, or a listed person fails the caller's check. */
export type MemberProblem<P> = { problem: 'entity-missing' } | { problem: 'not-business' } | { problem: 'person'; detail: P };

export type MemberRow = { memberId: string; externalId: string; role: BusinessMemberRole; declaredAt: string; updatedAt: string };

const toMember = (r: Record<string, unknown>): MemberRow => ({
  memberId: String(r.member_entity_id),
  externalId: String(r.external_id),
  role: r.role as BusinessMemberRole,
  declaredAt: iso(r.declared_at),
  updatedAt: iso(r.updated_at),
});

const MEMBER_COLUMNS = 'm.member_entity_id, e.external_id, m.role, m.declared_at, m.updated_at';

/**
 * Declares these people members of the business entity (a person already declared takes the role
 * given). `check` sees the type of each listed id among the business's entities (absent: none) and
 * may refuse, under the business entity's lock. Returns the listed members, in the order given, and
 * how many were new or changed role.
 */
export async function declareMembers<P>(
  db: Db,
  d: {
    businessId: string;
    entityId: string;
    members: readonly { entityId: string; role: BusinessMemberRole }[];
    check(types: Map<string, EntityKind>): P | null;
  },
): Promise<{ changed: number; items: MemberRow[] } | MemberProblem<P>> {
  return db.tx(async (tx) => {
    const type = await lockBusinessEntity(tx, d.businessId, d.entityId);
    if (!type) return { problem: 'entity-missing' as const };
    if (type !== 'BUSINESS') return { problem: 'not-business' as const };
    const ids = d.members.map((m) => m.entityId);
    // held against deletion until this commits (a person deleted meanwhile is not found, never a broken reference)
    const rows = await tx.query<{ id: string; type: EntityKind }>(
      'SELECT id, type FROM entities WHERE business_id = $1 AND id = ANY ($2::uuid[]) FOR KEY SHARE',
      [d.businessId, ids],
    );
    const refused = d.check(new Map(rows.map((r) => [String(r.id), r.type])));
    if (refused !== null) return { problem: 'person' as const, detail: refused };
    const changed = await tx.query<{ member_entity_id: string; role: string; inserted: boolean }>(
      `WITH earlier AS (SELECT member_entity_id FROM business_members WHERE business_entity_id = $1 AND member_entity_id = ANY ($2::uuid[]))
       INSERT INTO business_members (business_entity_id, member_entity_id, role)
       SELECT $1, x.id, x.role FROM unnest($2::uuid[], $3::text[]) WITH ORDINALITY AS x(id, role, n) ORDER BY x.n
       ON CONFLICT (business_entity_id, member_entity_id) DO UPDATE SET role = EXCLUDED.role, updated_at = now()
        WHERE business_members.role <> EXCLUDED.role
       RETURNING member_entity_id, role, NOT EXISTS (SELECT 1 FROM earlier e WHERE e.member_entity_id = business_members.member_entity_id) AS inserted`,
      [d.entityId, ids, d.members.map((m) => m.role)],
    );
    for (const c of changed) {
      recordAudit(tx, {
        businessId: d.businessId,
        action: 'business_member.declared',
        entityId: d.entityId,
        subject: { type: 'entity', id: String(c.member_entity_id) },
        details: { memberId: String(c.member_entity_id), role: c.role, changedRole: !c.inserted },
      });
    }
    const listed = await tx.query(
      `SELECT ${MEMBER_COLUMNS} FROM business_members m JOIN entities e ON e.id = m.member_entity_id
        WHERE m.business_entity_id = $1 AND m.member_entity_id = ANY ($2::uuid[])`,
      [d.entityId, ids],
    );
    const byId = new Map(listed.map((r) => [String(r.member_entity_id), toMember(r)]));
    return { changed: changed.length, items: ids.flatMap((id) => byId.get(id) ?? []) };
  });
}

/** A page of the business entity's members in declaration order (a sealed person is gone from it). */
export async function listMembers(db: Queryable, entityId: string, page: Page): Promise<{ items: MemberRow[]; totalItems: number }> {
  const [count] = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM business_members m JOIN entities e ON e.id = m.member_entity_id WHERE m.business_entity_id = $1',
    [entityId],
  );
  const rows = await db.query(
    `SELECT ${MEMBER_COLUMNS} FROM business_members m JOIN entities e ON e.id = m.member_entity_id
      WHERE m.business_entity_id = $1 ORDER BY m.seq LIMIT $2 OFFSET $3`,
    [entityId, page.limit, offsetOf(page)],
  );
  return { items: rows.map(toMember), totalItems: Number(count?.n ?? 0) };
}

/** Unassigns these members' features of the business entity (audited); the caller holds the locks. */
async function unassign(tx: Tx, businessId: string, entityId: string, memberId: string, featureId: string | null): Promise<number> {
  const gone = await tx.query<{ feature_id: string }>(
    `DELETE FROM member_feature_assignments WHERE business_entity_id = $1 AND member_entity_id = $2 AND ($3::uuid IS NULL OR feature_id = $3)
     RETURNING feature_id`,
    [entityId, memberId, featureId],
  );
  for (const g of gone) {
    recordAudit(tx, {
      businessId,
      action: 'feature.unassigned',
      entityId,
      subject: { type: 'entity', id: memberId },
      details: { memberId, featureId: String(g.feature_id) },
    });
  }
  return gone.length;
}

/**
 * In the caller's transaction: removes a member from the business entity with its assignments (the
 * caller then takes away the features they gave). 'not-member' when it was not declared (by this list).
 */
export async function removeMemberIn(
  tx: Tx,
  r: { businessId: string; entityId: string; memberId: string },
): Promise<'removed' | 'not-member' | MemberProblem<never>> {
  const type = await lockBusinessEntity(tx, r.businessId, r.entityId);
  if (!type) return { problem: 'entity-missing' as const };
  if (type !== 'BUSINESS') return { problem: 'not-business' as const };
  if ((await lockMembers(tx, [r.memberId], r.businessId)).length === 0) return 'not-member';
  await unassign(tx, r.businessId, r.entityId, r.memberId, null);
  const [gone] = await tx.query<{ role: string }>('DELETE FROM business_members WHERE business_entity_id = $1 AND member_entity_id = $2 RETURNING role', [
    r.entityId,
    r.memberId,
  ]);
  if (!gone) return 'not-member';
  recordAudit(tx, {
    businessId: r.businessId,
    action: 'business_member.removed',
    entityId: r.entityId,
    subject: { type: 'entity', id: r.memberId },
    details: { memberId: r.memberId, role: gone.role },
  });
  return 'removed';
}

export type AssignmentRow = {
  memberId: string;
  externalId: string;
  role: BusinessMemberRole;
  assignedAt: string;
  enabledAt: string | null;
  decided: boolean;
  open: boolean;
  decisionEventId: string | null;
  submitted: string[];
};

/** The assignments of a feature in the business entity, with the facts its answer needs about each person; all of them or `memberIds`'. */
async function assignmentRows(
  db: Queryable,
  a: { entityId: string; feature: AssignableFeature; memberIds?: readonly string[]; page?: Page },
): Promise<AssignmentRow[]> {
  const slugs = a.feature.personRequires.map((r) => r.requirementSlug);
  const rows = await db.query(
    `SELECT a.member_entity_id, e.external_id, bm.role, a.assigned_at, a.enabled_at,
            EXISTS (SELECT 1 FROM kyc_accounts k WHERE k.entity_id = a.member_entity_id) AS decided,
            EXISTS (SELECT 1 FROM ukyc_submissions s WHERE s.entity_id = a.member_entity_id AND s.status = 'waiting') AS open,
            (SELECT ev.id FROM events ev WHERE ev.entity_id = a.member_entity_id AND ev.event_type = $3
              ORDER BY ev.created_at DESC, ev.id LIMIT 1) AS decision_event_id,
            ARRAY(SELECT r.requirement_slug FROM entity_requirements r
                   WHERE r.entity_id = a.member_entity_id AND r.requirement_slug = ANY ($4::text[]) AND r.status <> 'SUPERSEDED'
                  UNION SELECT f.slug FROM files f WHERE f.entity_id = a.member_entity_id AND f.slug = ANY ($4::text[]) AND f.retired_at IS NULL) AS submitted
       FROM member_feature_assignments a
       JOIN business_members bm ON bm.business_entity_id = a.business_entity_id AND bm.member_entity_id = a.member_entity_id
       JOIN entities e ON e.id = a.member_entity_id
      WHERE a.business_entity_id = $1 AND a.feature_id = $2 AND ($5::uuid[] IS NULL OR a.member_entity_id = ANY ($5::uuid[]))
      ORDER BY a.seq
      ${a.page ? 'LIMIT $6 OFFSET $7' : ''}`,
    [a.entityId, a.feature.feature.id, CARD_ISSUANCE_EVENT.eventType, slugs, a.memberIds ?? null, ...(a.page ? [a.page.limit, offsetOf(a.page)] : [])],
  );
  return rows.map((r) => ({
    memberId: String(r.member_entity_id),
    externalId: String(r.external_id),
    role: r.role as BusinessMemberRole,
    assignedAt: iso(r.assigned_at),
    enabledAt: r.enabled_at == null ? null : iso(r.enabled_at),
    decided: r.decided === true,
    open: r.open === true,
    decisionEventId: r.decision_event_id == null ? null : String(r.decision_event_id),
    submitted: (r.submitted as string[]).map(String),
  }));
}

/** Whether the business entity has the feature's business part (its KYB approved). */
async function businessPartMet(db: Queryable, entityId: string, feature: AssignableFeature): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM entity_features WHERE entity_id = $1 AND feature_id = $2', [entityId, feature.businessFeature.id]);
  return rows.length === 1;
}

export type AssignmentState = { businessEnabled: boolean; items: AssignmentRow[] };

/**
 * In the caller's transaction: assigns the feature to these declared members of the business entity
 * (already assigned ones stay as they are), their rows locked (the caller then enables it for each
 * that meets its requirements). `check` sees which listed ids are declared members and may refuse,
 * under the lock. Returns how many were new.
 */
export async function assignFeatureIn<P>(
  tx: Tx,
  a: { businessId: string; entityId: string; feature: AssignableFeature; memberIds: readonly string[]; now: Date; check(declared: Set<string>): P | null },
): Promise<{ assigned: number } | MemberProblem<P>> {
  const type = await lockBusinessEntity(tx, a.businessId, a.entityId);
  if (!type) return { problem: 'entity-missing' as const };
  if (type !== 'BUSINESS') return { problem: 'not-business' as const };
  const declared = await tx.query<{ member_entity_id: string }>(
    `SELECT m.member_entity_id FROM business_members m JOIN entities e ON e.id = m.member_entity_id
      WHERE m.business_entity_id = $1 AND m.member_entity_id = ANY ($2::uuid[])`,
    [a.entityId, a.memberIds],
  );
  const refused = a.check(new Set(declared.map((r) => String(r.member_entity_id))));
  if (refused !== null) return { problem: 'person' as const, detail: refused };
  await lockMembers(tx, a.memberIds, a.businessId);
  const added = await tx.query<{ member_entity_id: string }>(
    `INSERT INTO member_feature_assignments (business_entity_id, feature_id, member_entity_id, assigned_at)
     SELECT $1, $2, x.id, $4 FROM unnest($3::uuid[]) WITH ORDINALITY AS x(id, n) ORDER BY x.n
     ON CONFLICT DO NOTHING RETURNING member_entity_id`,
    [a.entityId, a.feature.feature.id, a.memberIds, a.now],
  );
  for (const r of added) {
    recordAudit(tx, {
      businessId: a.businessId,
      action: 'feature.assigned',
      entityId: a.entityId,
      subject: { type: 'entity', id: String(r.member_entity_id) },
      details: { memberId: String(r.member_entity_id), featureId: a.feature.feature.id },
    });
  }
  return { assigned: added.length };
}

/** These members' assignments of the feature in the business entity, in the order given. */
export async function assignmentsOf(
  db: Queryable,
  a: { entityId: string; feature: AssignableFeature; memberIds: readonly string[] },
): Promise<AssignmentState> {
  const rows = new Map((await assignmentRows(db, a)).map((r) => [r.memberId, r]));
  return { businessEnabled: await businessPartMet(db, a.entityId, a.feature), items: a.memberIds.flatMap((id) => rows.get(id) ?? []) };
}

/** In the caller's transaction: removes the feature's assignment from a member, its row locked (the caller then takes the access away). */
export async function unassignFeatureIn(
  tx: Tx,
  a: { businessId: string; entityId: string; feature: AssignableFeature; memberId: string },
): Promise<'removed' | 'not-assigned' | MemberProblem<never>> {
  const type = await lockBusinessEntity(tx, a.businessId, a.entityId);
  if (!type) return { problem: 'entity-missing' as const };
  if (type !== 'BUSINESS') return { problem: 'not-business' as const };
  await lockMembers(tx, [a.memberId], a.businessId);
  if ((await unassign(tx, a.businessId, a.entityId, a.memberId, a.feature.feature.id)) === 0) return 'not-assigned';
  return 'removed';
}

/** A page of the feature's assignments in the business entity, in assignment order. */
export async function listAssignments(
  db: Queryable,
  a: { entityId: string; feature: AssignableFeature; page: Page },
): Promise<AssignmentState & { totalItems: number }> {
  const [count] = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM member_feature_assignments a JOIN entities e ON e.id = a.member_entity_id
      WHERE a.business_entity_id = $1 AND a.feature_id = $2`,
    [a.entityId, a.feature.feature.id],
  );
  return {
    totalItems: Number(count?.n ?? 0),
    businessEnabled: await businessPartMet(db, a.entityId, a.feature),
    items: await assignmentRows(db, a),
  };
}

/**
 * For a change to a business entity that may move its members' access (its KYB decision, its
 * deletion): locks the members that hold assignments of it (after it: the caller holds it) and
 * returns them, to refresh once the change is made.
 */
export async function lockAssignedMembers(db: Queryable, businessEntityId: string): Promise<string[]> {
  const rows = await db.query<{ member_entity_id: string }>('SELECT DISTINCT member_entity_id FROM member_feature_assignments WHERE business_entity_id = $1', [
    businessEntityId,
  ]);
  return lockMembers(
    db,
    rows.map((r) => String(r.member_entity_id)),
  );
}
