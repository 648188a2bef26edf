// Entities and what hangs off them (submitted requirements, enabled features), scoped by business.
import { randomUUID } from 'node:crypto';
import { features } from '../domain/feature-catalog.ts';
import type { CreateEntityInput, Entity, EntityListItem } from '../domain/entity.ts';
import { isUuid } from '../domain/ids.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';
import { iso, isTx, isUniqueViolation, type Db, type Queryable, type Row, type Tx } from './db.ts';
import { discardBytes, fileKeysOf } from './files.ts';
import { sealIfKept } from './retention.ts';
import { recordAudit } from './audit-log.ts';
import { lockAssignedMembers } from './business-members.ts';

export class ExternalIdTaken extends Error {}

/**
 * Locks the entity's row for the transaction; false when there is no such entity (deleted). Every
 * writer of an entity's rows takes it first (a business entity before its members, an entity before
 * its submission), so writers never wait on each other in a circle.
 */
export async function lockEntity(db: Queryable, entityId: string): Promise<boolean> {
  if (isTx(db) && db.memo.has(lockKey(entityId))) return true; // held since this transaction locked it: it exists
  const held = (await db.query('SELECT 1 FROM entities WHERE id = $1 FOR UPDATE', [entityId])).length === 1;
  if (held && isTx(db)) db.memo.set(lockKey(entityId), true);
  return held;
}

/**
 * Locks these entities' rows (FOR UPDATE) as lockEntity would one by one; returns those that exist.
 * In the one order of the codebase — business entities before people (a business entity before its
 * members: a person's deletion, KYB's settling), then by id — so two transactions locking
 * overlapping sets never wait on each other in a cycle.
 */
export async function lockEntities(tx: Tx, entityIds: readonly string[]): Promise<Set<string>> {
  const wanted = [...new Set(entityIds)].filter((id) => !tx.memo.has(lockKey(id)));
  const rows = wanted.length
    ? await tx.query<{ id: string }>("SELECT id FROM entities WHERE id = ANY ($1::uuid[]) ORDER BY type = 'INDIVIDUAL', id FOR UPDATE", [wanted])
    : [];
  for (const r of rows) tx.memo.set(lockKey(String(r.id)), true);
  return new Set(entityIds.filter((id) => tx.memo.has(lockKey(id))));
}

const lockKey = (entityId: string) => `entity-lock:${entityId}`;

const toListItem = (r: Row): EntityListItem => ({
  id: String(r.id),
  externalId: String(r.external_id),
  type: r.type as EntityListItem['type'],
  businessId: String(r.business_id),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/** A declared member, as stored (the use case has checked it is an INDIVIDUAL of the business). */
export type MemberRow = { entityId: string; role: string; ownershipPercent?: number | undefined };

/** entity.created: the entity's type and its externalId (the client's reference) by its keyed digest, never in clear. */
export function recordEntityCreated(tx: Tx, businessId: string, entityId: string, externalId: string, type: string): void {
  recordAudit(tx, {
    businessId,
    action: 'entity.created',
    entityId,
    subject: { type: 'entity', id: entityId },
    details: { type },
    keyed: { externalId },
  });
}

/** member.declared / member.removed: the link of a member (subject) to its business entity (entityId). */
export function recordMemberChange(
  tx: Tx,
  m: { businessId: string; businessEntityId: string; memberId: string; role: string | null },
  action: 'member.declared' | 'member.removed',
): void {
  recordAudit(tx, {
    businessId: m.businessId,
    action,
    entityId: m.businessEntityId,
    subject: { type: 'entity', id: m.memberId },
    details: { memberId: m.memberId, role: m.role },
  });
}

type SubmittedValue = { businessId: string; entityId: string; slug: string; value: unknown };

/** A requirement value submitted on an entity, and its entry (requirement.submitted: the slug, the SHA-256 of the value). */
async function insertRequirement(tx: Tx, r: SubmittedValue): Promise<void> {
  const id = randomUUID();
  await tx.query('INSERT INTO entity_requirements (id, entity_id, requirement_slug, value) VALUES ($1, $2, $3, $4)', [
    id,
    r.entityId,
    r.slug,
    JSON.stringify(r.value),
  ]);
  recordAudit(tx, {
    businessId: r.businessId,
    action: 'requirement.submitted',
    entityId: r.entityId,
    subject: { type: 'requirement', id },
    details: { slug: r.slug },
    keyed: { value: r.value },
  });
}

/**
 * A requirement value submitted on an existing entity (a record of a requirement batch): it
 * supersedes the entity's earlier PENDING value of the requirement outside any submission.
 */
export async function submitRequirementValue(tx: Tx, r: SubmittedValue): Promise<void> {
  await tx.query(
    `UPDATE entity_requirements SET status = 'SUPERSEDED', updated_at = now()
      WHERE entity_id = $1 AND requirement_slug = $2 AND status = 'PENDING' AND submission_id IS NULL`,
    [r.entityId, r.slug],
  );
  await insertRequirement(tx, r);
}

export async function createEntity(db: Db, businessId: string, input: CreateEntityInput, members: readonly MemberRow[] = []): Promise<string> {
  const id = randomUUID();
  try {
    await db.tx(async (tx) => {
      await tx.query('INSERT INTO entities (id, business_id, external_id, type) VALUES ($1, $2, $3, $4)', [id, businessId, input.externalId, input.type]);
      recordEntityCreated(tx, businessId, id, input.externalId, input.type);
      for (const r of input.requirements ?? []) await insertRequirement(tx, { businessId, entityId: id, slug: r.requirementSlug, value: r.value });
      for (const m of members) {
        await tx.query('INSERT INTO entity_members (business_entity_id, member_entity_id, role, ownership_percent) VALUES ($1, $2, $3, $4)', [
          id,
          m.entityId,
          m.role,
          m.ownershipPercent ?? null,
        ]);
        recordMemberChange(tx, { businessId, businessEntityId: id, memberId: m.entityId, role: m.role }, 'member.declared');
      }
    });
  } catch (err) {
    if (isUniqueViolation(err, 'entities_business_external_id_key')) throw new ExternalIdTaken();
    throw err;
  }
  return id;
}

export async function listEntities(db: Db, businessId: string, page: Page) {
  const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM entities WHERE business_id = $1', [businessId]);
  const rows = await db.query(`SELECT * FROM entities WHERE business_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`, [
    businessId,
    page.limit,
    offsetOf(page),
  ]);
  return { items: rows.map(toListItem), totalItems: Number(count?.n ?? 0) };
}

export async function getEntity(db: Db, businessId: string, id: string): Promise<Entity | undefined> {
  const [row] = await db.query('SELECT * FROM entities WHERE id = $1 AND business_id = $2', [id, businessId]);
  if (!row) return undefined;
  const requirements = await db.query('SELECT * FROM entity_requirements WHERE entity_id = $1 ORDER BY created_at, requirement_slug', [id]);
  const enabled = await db.query('SELECT * FROM entity_features WHERE entity_id = $1 ORDER BY enabled_at', [id]);
  return {
    ...toListItem(row),
    verifiedBy: row.verified_by == null ? null : String(row.verified_by),
    enabledFeatures: enabled.flatMap((f) => {
      const feature = features.find((x) => x.id === f.feature_id);
      return feature ? [{ id: feature.id, slug: feature.slug, name: feature.name, enabledAt: iso(f.enabled_at) }] : [];
    }),
    submittedRequirements: requirements.map((r) => ({
      requirementSlug: String(r.requirement_slug),
      value: r.value,
      status: r.status as Entity['submittedRequirements'][number]['status'],
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
    })),
  };
}

/**
 * In the caller's transaction: deletes the entity and everything that hangs off it (requirements,
 * features, KYC accounts and the person data behind them, members' links, files' rows, submissions:
 * foreign keys, cascade), and marks its files' bytes due for removal in the same one. The entity's
 * row is locked before anything of it is touched, so an upload or a decision recording for it either
 * commits before (and is deleted with it) or finds it gone. Before it, the business entities that
 * declare it as a member are locked (in id order): one lock order, a business entity before its
 * members, as their own writers take them (saving a KYB profile rewrites its members' links). A
 * business entity's members holding features it assigned are locked after it and returned: they lose
 * them (the caller brings their access in line: onboarding/entities.ts). Under a retention policy, or
 * while a legal hold binds the entity, it is sealed instead (store/retention.ts): gone from every
 * read, kept until the date returned. Either way one audit entry. Returns the store keys whose bytes
 * are to go, or the seal's purge date; null when there was no such entity.
 */
export async function deleteEntityIn(
  tx: Tx,
  businessId: string,
  id: string,
  now: Date,
): Promise<{ ended: { removed: string[] } | { sealedUntil: Date }; members: string[] } | null> {
  await tx.query(
    'SELECT 1 FROM entities WHERE business_id = $2 AND id IN (SELECT business_entity_id FROM memberships WHERE member_entity_id = $1) ORDER BY id FOR UPDATE',
    [id, businessId],
  );
  const [entity] = await tx.query('SELECT 1 FROM entities WHERE id = $1 AND business_id = $2 FOR UPDATE', [id, businessId]);
  if (!entity) return null;
  // a business entity's members lose the features its assignments gave them (after it: one lock order)
  const members = await lockAssignedMembers(tx, id);
  const sealedUntil = await sealIfKept(tx, businessId, id, now);
  if (sealedUntil) return { ended: { sealedUntil }, members };
  const keys = await fileKeysOf(tx, id);
  await discardBytes(tx, keys);
  await tx.query('DELETE FROM entities WHERE id = $1', [id]);
  recordAudit(tx, { businessId, action: 'entity.deleted', entityId: id, subject: { type: 'entity', id }, details: { files: keys.length } });
  return { ended: { removed: keys }, members };
}

/** The entity a share names: by the client's externalId first, else by our id (DESIGN.md section 4). */
export async function resolveEntityRef(db: Queryable, businessId: string, ref: string): Promise<string | null> {
  const [byExternal] = await db.query<{ id: string }>('SELECT id FROM entities WHERE business_id = $1 AND external_id = $2', [businessId, ref]);
  if (byExternal) return byExternal.id;
  if (!isUuid(ref)) return null;
  const [byId] = await db.query<{ id: string }>('SELECT id FROM entities WHERE business_id = $1 AND id = $2', [businessId, ref]);
  return byId?.id ?? null;
}

/** The entity of the business holding this card processor token, if any. */
export async function cardProcessorTokenHolder(db: Queryable, businessId: string, token: string): Promise<string | null> {
  const [row] = await db.query<{ id: string }>('SELECT id FROM entities WHERE business_id = $1 AND card_processor_public_token = $2', [businessId, token]);
  return row?.id ?? null;
}

/** Which of these card processor tokens entities of the business hold, and which entity. */
export async function cardTokenHolders(db: Queryable, businessId: string, tokens: readonly string[]): Promise<Map<string, string>> {
  if (tokens.length === 0) return new Map();
  const rows = await db.query<{ id: string; t: string }>(
    'SELECT id, card_processor_public_token AS t FROM entities WHERE business_id = $1 AND card_processor_public_token = ANY($2::text[])',
    [businessId, tokens],
  );
  return new Map(rows.map((r) => [String(r.t), String(r.id)]));
}

/** The type of each of these entities of the business (absent ids are not in the map). */
export async function entityTypes(db: Queryable, businessId: string, ids: readonly string[]): Promise<Map<string, 'INDIVIDUAL' | 'BUSINESS'>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{ id: string; type: 'INDIVIDUAL' | 'BUSINESS' }>(
    'SELECT id, type FROM entities WHERE business_id = $1 AND id = ANY ($2::uuid[])',
    [businessId, ids],
  );
  return new Map(rows.map((r) => [String(r.id), r.type]));
}

/** An entity of the business, by id: its type (undefined when there is none). */
export async function entityType(db: Queryable, businessId: string, id: string): Promise<'INDIVIDUAL' | 'BUSINESS' | undefined> {
  return (await entityTypes(db, businessId, [id])).get(id);
}

/** The business an entity belongs to (null when there is no such entity). */
export async function businessOfEntity(db: Queryable, entityId: string): Promise<string | null> {
  const [row] = await db.query<{ business_id: string }>('SELECT business_id FROM entities WHERE id = $1', [entityId]);
  return row ? String(row.business_id) : null;
}

/**
 * Whether `memberId` is a declared member of the business entity `entityId`: a declared owner
 * (kyb-ubo-declaration, KYB profile) or a member declared with POST /entity/{entityId}/members.
 */
export async function isMemberOf(db: Queryable, entityId: string, memberId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM memberships WHERE business_entity_id = $1 AND member_entity_id = $2 LIMIT 1', [entityId, memberId]);
  return rows.length === 1;
}

/** Whether `memberId` is a declared owner (kyb-ubo-declaration, KYB profile) of the business entity `entityId`. */
export async function isOwnerOf(db: Queryable, entityId: string, memberId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM entity_members WHERE business_entity_id = $1 AND member_entity_id = $2', [entityId, memberId]);
  return rows.length === 1;
}
