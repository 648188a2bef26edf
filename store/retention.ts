// Retention and erasure (issue 21): a business's policy, sealing an entity when its relationship
// ends, legal holds, and the purge at the end of the period. The only module (with trace and
// evidence, which read) that looks at entity_records, the table under the `entities` view: a sealed
// entity is in the table and not in the view (store/migrations/016_retention.sql).
import { randomUUID } from 'node:crypto';
import { holdBinds, purgeAfter, retentionStep, type Hold, type RetentionPolicy } from '../domain/retention.ts';
import { recordAudit } from './audit-log.ts';
import { iso, type Db, type Queryable, type Tx } from './db.ts';
import { discardBytes, fileKeysOf } from './files.ts';
import { includeSealed } from './record-reader.ts';

export async function retentionPolicyOf(db: Queryable, businessId: string): Promise<RetentionPolicy> {
  const [row] = await db.query<{ retention_years: number | null }>('SELECT retention_years FROM businesses WHERE id = $1', [businessId]);
  return row?.retention_years ? { years: Number(row.retention_years) } : null;
}

/** Sets the policy for deletions from now on (records sealed before keep their date); false when there is no such business. */
export async function setRetentionPolicy(db: Db, businessId: string, policy: RetentionPolicy): Promise<boolean> {
  return db.tx(async (tx) => {
    const rows = await tx.query('UPDATE businesses SET retention_years = $2 WHERE id = $1 RETURNING id', [businessId, policy?.years ?? null]);
    if (rows.length === 0) return false;
    recordAudit(tx, { businessId, action: 'retention.policy_set', details: { years: policy?.years ?? null } });
    return true;
  });
}

const toHold = (r: Record<string, unknown>): Hold => ({
  id: String(r.id),
  until: r.until == null ? null : new Date(iso(r.until)),
  releasedAt: r.released_at == null ? null : new Date(iso(r.released_at)),
});

async function holdsOf(db: Queryable, entityId: string): Promise<Hold[]> {
  return (await db.query('SELECT id, until, released_at FROM legal_holds WHERE entity_id = $1', [entityId])).map(toHold);
}

/**
 * Ends the relationship with an entity whose row the caller has locked: under a retention policy,
 * or while a legal hold binds it, the record is sealed (gone from the API, kept until the date
 * returned); else null, and the caller removes it at once (the spec's delete).
 */
export async function sealIfKept(tx: Tx, businessId: string, entityId: string, now: Date): Promise<Date | null> {
  const policy = await retentionPolicyOf(tx, businessId);
  const held = (await holdsOf(tx, entityId)).some((h) => holdBinds(h, now));
  if (!policy && !held) return null;
  const until = policy ? purgeAfter(now, policy.years) : now;
  await tx.query('UPDATE entity_records SET sealed_at = $2, purge_after = $3 WHERE id = $1', [entityId, now, until]);
  recordAudit(tx, {
    businessId,
    action: 'entity.sealed',
    entityId,
    subject: { type: 'entity', id: entityId },
    details: { purgeAfter: until.toISOString(), retentionYears: policy?.years ?? null, held },
  });
  return until;
}

export type PurgeStep = { purged: true; keys: string[] } | { purged: false; gone: true } | { purged: false; gone: false; at: Date | null };

/**
 * Purges a sealed record if its time has come and no hold binds it: the record and every piece of it
 * (the same cascade as the spec's delete), its files' bytes marked due, one entity.purged entry. Else
 * says when to look again. Its business entities that declare it as a member are locked first, as
 * deletion does (one lock order).
 */
export async function purgeIfDue(db: Db, entityId: string, now: Date): Promise<PurgeStep> {
  return db.tx(async (tx) => {
    await includeSealed(tx); // the sealed record's own member links
    await tx.query('SELECT 1 FROM entity_records WHERE id IN (SELECT business_entity_id FROM memberships WHERE member_entity_id = $1) ORDER BY id FOR UPDATE', [
      entityId,
    ]);
    const [row] = await tx.query<{ business_id: string; purge_after: Date }>(
      'SELECT business_id, purge_after FROM entity_records WHERE id = $1 AND sealed_at IS NOT NULL FOR UPDATE',
      [entityId],
    );
    if (!row) return { purged: false, gone: true };
    const step = retentionStep(new Date(iso(row.purge_after)), await holdsOf(tx, entityId), now);
    if (!step.purge) return { purged: false, gone: false, at: step.at };
    const keys = await fileKeysOf(tx, entityId);
    await discardBytes(tx, keys);
    await tx.query('DELETE FROM entity_records WHERE id = $1', [entityId]);
    recordAudit(tx, {
      businessId: String(row.business_id),
      action: 'entity.purged',
      entityId,
      subject: { type: 'entity', id: entityId },
      details: { files: keys.length },
    });
    return { purged: true, keys };
  });
}

export type HoldView = {
  id: string;
  businessId: string;
  entityId: string;
  reason: string;
  until: string | null;
  placedBy: string;
  placedAt: string;
  releasedBy: string | null;
  releasedAt: string | null;
};

const toHoldView = (r: Record<string, unknown>): HoldView => ({
  id: String(r.id),
  businessId: String(r.business_id),
  entityId: String(r.entity_id),
  reason: String(r.reason),
  until: r.until == null ? null : iso(r.until),
  placedBy: String(r.placed_by),
  placedAt: iso(r.placed_at),
  releasedBy: r.released_by == null ? null : String(r.released_by),
  releasedAt: r.released_at == null ? null : iso(r.released_at),
});

/** Places a hold on an entity, live or sealed; null when there is no such record (or it was purged). */
export async function addHold(db: Db, h: { entityId: string; reason: string; until: Date | null; by: string }): Promise<HoldView | null> {
  return db.tx(async (tx) => {
    const [entity] = await tx.query<{ business_id: string }>('SELECT business_id FROM entity_records WHERE id = $1 FOR UPDATE', [h.entityId]);
    if (!entity) return null;
    const id = randomUUID();
    const [row] = await tx.query('INSERT INTO legal_holds (id, business_id, entity_id, reason, until, placed_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *', [
      id,
      entity.business_id,
      h.entityId,
      h.reason,
      h.until,
      h.by,
    ]);
    recordAudit(tx, {
      businessId: String(entity.business_id),
      action: 'hold.added',
      entityId: h.entityId,
      subject: { type: 'legal_hold', id },
      details: { until: h.until?.toISOString() ?? null },
      keyed: { reason: h.reason },
    });
    return toHoldView(row!);
  });
}

/** Releases a hold; null when there is no such hold, or it is released already. */
export async function releaseHold(db: Db, holdId: string, by: string): Promise<HoldView | null> {
  return db.tx(async (tx) => {
    const [row] = await tx.query('UPDATE legal_holds SET released_by = $2, released_at = now() WHERE id = $1 AND released_at IS NULL RETURNING *', [
      holdId,
      by,
    ]);
    if (!row) return null;
    const hold = toHoldView(row);
    recordAudit(tx, { businessId: hold.businessId, action: 'hold.released', entityId: hold.entityId, subject: { type: 'legal_hold', id: hold.id } });
    return hold;
  });
}

export async function listHolds(db: Queryable, filter: { entityId?: string; businessId?: string; all?: boolean }): Promise<HoldView[]> {
  const where = [filter.all ? 'true' : 'released_at IS NULL'];
  const params: unknown[] = [];
  if (filter.entityId) where.push(`entity_id = $${params.push(filter.entityId)}`);
  if (filter.businessId) where.push(`business_id = $${params.push(filter.businessId)}`);
  return (await db.query(`SELECT * FROM legal_holds WHERE ${where.join(' AND ')} ORDER BY placed_at, id`, params)).map(toHoldView);
}

export type SealedRecord = {
  entityId: string;
  businessId: string;
  type: string;
  sealedAt: string;
  purgeAfter: string;
  /** When it will be purged, holds counted; null while an open-ended hold binds it. */
  purgesAt: string | null;
  holds: string[];
};

/** Every sealed record (of one business, or all), soonest purge first: what `vouch retention report` prints. */
export async function sealedRecords(db: Queryable, now: Date, businessId?: string): Promise<SealedRecord[]> {
  const rows = await db.query<{ id: string; business_id: string; type: string; sealed_at: Date; purge_after: Date }>(
    `SELECT id, business_id, type, sealed_at, purge_after FROM entity_records WHERE sealed_at IS NOT NULL ${businessId ? 'AND business_id = $1' : ''}
      ORDER BY purge_after, id`,
    businessId ? [businessId] : [],
  );
  const out: SealedRecord[] = [];
  for (const r of rows) {
    const holds = await holdsOf(db, r.id);
    const step = retentionStep(new Date(iso(r.purge_after)), holds, now);
    out.push({
      entityId: String(r.id),
      businessId: String(r.business_id),
      type: String(r.type),
      sealedAt: iso(r.sealed_at),
      purgeAfter: iso(r.purge_after),
      purgesAt: step.purge ? now.toISOString() : step.at ? step.at.toISOString() : null,
      holds: holds.filter((h) => h.releasedAt === null).map((h) => h.id),
    });
  }
  return out;
}

/** Sealed records whose purge date has passed: the reconciler makes sure each has its retention workflow. */
export async function sealedPastDue(db: Queryable, now: Date, limit = 200): Promise<{ entityId: string; businessId: string }[]> {
  const rows = await db.query<{ id: string; business_id: string }>(
    'SELECT id, business_id FROM entity_records WHERE sealed_at IS NOT NULL AND purge_after <= $1 ORDER BY purge_after LIMIT $2',
    [now, limit],
  );
  return rows.map((r) => ({ entityId: String(r.id), businessId: String(r.business_id) }));
}

/** The business of a record, live or sealed (null when there is none: purged, or never). */
export async function recordBusiness(db: Queryable, entityId: string): Promise<{ businessId: string; sealed: boolean } | null> {
  const [row] = await db.query<{ business_id: string; sealed_at: Date | null }>('SELECT business_id, sealed_at FROM entity_records WHERE id = $1', [entityId]);
  return row ? { businessId: String(row.business_id), sealed: row.sealed_at !== null } : null;
}
