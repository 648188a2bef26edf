// The audit log's store (issue 21): entries are collected during a transaction and written last,
// just before it commits (Tx.beforeCommit), so no change commits without its entry and no entry
// without its change. They are written to audit_pending: once the transaction has committed, the
// chainer (store/audit-chainer.ts) moves them into audit_log with their seq and hashes, holding the
// business's chain head only for that, so no business transaction waits on another's commit.
// Readers of the chain link first.
// domain/audit-chain.ts holds the hashing rules.
import { randomBytes, randomUUID } from 'node:crypto';
import { isAuditAction, type AuditAction } from '../domain/audit-actions.ts';
import { ACTOR_ID_MAX_CHARS, boundedDetails, clip } from '../domain/audit-bounds.ts';
import { canonicalDetails, type AuditEntry, type AuditFields, type ChainHead } from '../domain/audit-chain.ts';
import { keyedDigest } from '../domain/digests.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';
import { actingNow } from './audit-actor.ts';
import { AUDIT_COLUMNS as COLUMNS, linkSoon, toFields } from './audit-chainer.ts';
import { isTx, type Queryable, type Row, type Tx } from './db.ts';

/** What a writer says about its change; who, when and the chain are filled in here. */
export type AuditDraft = {
  businessId: string;
  action: AuditAction;
  entityId?: string | null;
  subject?: { type: string; id: string } | null;
  details?: AuditFields['details'];
  /**
   * Values named by their digest under the entity's key (`<name>Hmac` in details): low-entropy ones a
   * plain hash would give away to a guess (an externalId, a hold's reason, a person's data). Only
   * with an entityId.
   */
  keyed?: Record<string, unknown>;
  /** `ok` (the default) or a refusal's code. */
  outcome?: string;
};

type Pending = Omit<AuditFields, 'seq' | 'prevHash'> & { keyed?: Record<string, unknown> };

const pending = new WeakMap<Tx, Pending[]>();

/** Records an entry in the caller's transaction; it is written when the transaction commits (and not at all if it rolls back), and linked just after. */
export function recordAudit(tx: Queryable, draft: AuditDraft): void {
  if (!isTx(tx)) throw new Error(`audit entry ${draft.action} outside a transaction: write it in the transaction of its change`);
  if (!isAuditAction(draft.action)) throw new Error(`unknown audit action ${String(draft.action)}`);
  if (draft.keyed && !draft.entityId) throw new Error(`audit entry ${draft.action}: keyed digests need the entity whose key they are under`);
  const { actor, requestId } = actingNow();
  const entry: Pending = {
    businessId: draft.businessId,
    id: randomUUID(),
    occurredAt: new Date().toISOString(),
    actorType: actor.type,
    actorId: clip(actor.id, ACTOR_ID_MAX_CHARS),
    runId: actor.type === 'workflow' ? actor.runId : null,
    requestId,
    action: draft.action,
    entityId: draft.entityId ?? null,
    subjectType: draft.subject?.type ?? null,
    subjectId: draft.subject?.id ?? null,
    details: draft.details ?? {},
    ...(draft.keyed ? { keyed: draft.keyed } : {}),
    outcome: draft.outcome ?? 'ok',
  };
  let list = pending.get(tx);
  if (!list) {
    pending.set(tx, (list = []));
    tx.beforeCommit(() => writeUnlinked(tx, list!));
    tx.afterCommit((db) => linkSoon(db, [...new Set(list!.map((e) => e.businessId))]));
  }
  list.push(entry);
}

/** Records one entry in a transaction of its own (a read of personal data, a refusal: nothing else to commit with). */
export async function recordAuditAlone(db: { tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> }, draft: AuditDraft): Promise<void> {
  await db.tx(async (tx) => recordAudit(tx, draft));
}

/** Entries per INSERT: 13 parameters each, well within PostgreSQL's 65,535 parameters to a statement. */
const WRITE_CHUNK = 2000;

/** Each entity's digest key, made the first time one is needed (in the transaction that needs it): one statement as a rule. */
async function digestKeys(db: Queryable, entityIds: readonly string[]): Promise<Map<string, Buffer>> {
  if (entityIds.length === 0) return new Map();
  // the statement's snapshot does not see its own inserts: those come back from RETURNING. One entity (a transaction's
  // usual case) in a statement of its own text, which is prepared once; several, unnested (store/prepared-statements.ts)
  const rows =
    entityIds.length === 1
      ? await db.query<{ entity_id: string; key: Buffer }>(
          `WITH made AS (INSERT INTO entity_digest_keys (entity_id, key) VALUES ($1, $2) ON CONFLICT (entity_id) DO NOTHING RETURNING entity_id, key)
           SELECT entity_id, key FROM made UNION ALL SELECT entity_id, key FROM entity_digest_keys WHERE entity_id = $1`,
          [entityIds[0], randomBytes(32)],
        )
      : await db.query<{ entity_id: string; key: Buffer }>(
          `WITH made AS (INSERT INTO entity_digest_keys (entity_id, key) SELECT * FROM unnest($1::uuid[], $2::bytea[]) ON CONFLICT (entity_id) DO NOTHING
                         RETURNING entity_id, key)
           SELECT entity_id, key FROM made UNION ALL SELECT entity_id, key FROM entity_digest_keys WHERE entity_id = ANY ($1::uuid[])`,
          [entityIds, entityIds.map(() => randomBytes(32))],
        );
  const keys = new Map(rows.map((r) => [String(r.entity_id), r.key]));
  // a key another transaction made after this statement's snapshot, and committed before its insert ended
  const late = entityIds.filter((id) => !keys.has(id));
  if (late.length)
    for (const r of await db.query<{ entity_id: string; key: Buffer }>('SELECT entity_id, key FROM entity_digest_keys WHERE entity_id = ANY ($1::uuid[])', [
      late,
    ]))
      keys.set(String(r.entity_id), r.key);
  return keys;
}

/**
 * The transaction's entries, in the order recorded (their `written` serial keeps it), to wait for
 * their link: keyed values digested under their entity's key, details capped.
 */
async function writeUnlinked(db: Queryable, pendingEntries: Pending[]): Promise<void> {
  const keys = await digestKeys(db, [...new Set(pendingEntries.flatMap((e) => (e.keyed ? [e.entityId!] : [])))]);
  const entries = pendingEntries.map(({ keyed, ...e }) => {
    const details = { ...e.details };
    for (const [name, value] of Object.entries(keyed ?? {})) details[`${name}Hmac`] = keyedDigest(keys.get(e.entityId!)!, value);
    return { ...e, details: boundedDetails(details) };
  });
  for (let from = 0; from < entries.length; from += WRITE_CHUNK) {
    const values: unknown[] = [];
    const rows = entries.slice(from, from + WRITE_CHUNK).map((e) => {
      const row = [
        e.businessId,
        e.id,
        e.occurredAt,
        e.actorType,
        e.actorId,
        e.runId,
        e.requestId,
        e.action,
        e.entityId,
        e.subjectType,
        e.subjectId,
        canonicalDetails(e.details),
        e.outcome,
      ];
      const placeholders = row.map((_, i) => `$${values.length + i + 1}`).join(', ');
      values.push(...row);
      return `(${placeholders})`;
    });
    await db.query(`INSERT INTO audit_pending (${COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`, values);
  }
}

const toEntry = (r: Row): AuditEntry => ({ ...toFields(r), seq: Number(r.seq), prevHash: String(r.prev_hash), hash: String(r.hash) });

export type AuditFilter = { entityId?: string | undefined; action?: AuditAction | undefined; from?: string | undefined; to?: string | undefined };

/**
 * A business's entries, oldest first (seq order: a page never shifts as entries are added). Unfiltered,
 * a page is a range of seq and the count is the head's seq (a chain's seqs run 1..head without a gap):
 * reading page 10,000 of a long log costs what page 1 does, with no count over millions of rows.
 */
export async function auditPage(db: Queryable, businessId: string, filter: AuditFilter, page: Page) {
  if (!filter.entityId && !filter.action && !filter.from && !filter.to) {
    const from = offsetOf(page);
    const rows = await db.query('SELECT * FROM audit_log WHERE business_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq', [
      businessId,
      from,
      from + page.limit,
    ]);
    return { items: rows.map(toEntry), totalItems: (await chainHead(db, businessId))?.seq ?? 0 };
  }
  const where = ['business_id = $1'];
  const params: unknown[] = [businessId];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.entityId) add('entity_id = ?', filter.entityId);
  if (filter.action) add('action = ?', filter.action);
  if (filter.from) add('occurred_at >= ?', filter.from);
  if (filter.to) add('occurred_at < ?', filter.to);
  const [count] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE ${where.join(' AND ')}`, params);
  const rows = await db.query(`SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${page.limit} OFFSET ${offsetOf(page)}`, params);
  return { items: rows.map(toEntry), totalItems: Number(count?.n ?? 0) };
}

/**
 * Every entry of the entity's business naming the entity (its own and its members' links), oldest
 * first; for trace and evidence. Only its business's: another business's entries never name it (a
 * refusal names the caller's business and an entity only of its own, api/middleware/refusals.ts).
 */
export async function auditOfEntity(db: Queryable, businessId: string, entityId: string): Promise<AuditEntry[]> {
  const rows = await db.query(
    `SELECT * FROM audit_log WHERE business_id = $1
        AND (entity_id = $2 OR (subject_type = 'entity' AND entity_id::text IS DISTINCT FROM subject_id AND subject_id = $3)) ORDER BY seq`,
    [businessId, entityId, entityId],
  );
  return rows.map(toEntry);
}

/**
 * A business's chain in seq order, read in pages (a chain can be millions long), up to `upTo` when
 * given: entries up to a head once read are fixed (linked before the head moved past them), so a
 * walk up to it reads one consistent chain while writers append beyond it.
 */
export async function* chainOf(db: Queryable, businessId: string, options: { upTo?: number; pageSize?: number } = {}): AsyncGenerator<AuditEntry> {
  const pageSize = options.pageSize ?? 5000;
  const upTo = options.upTo ?? Number.MAX_SAFE_INTEGER;
  let after = 0;
  for (;;) {
    const rows = await db.query('SELECT * FROM audit_log WHERE business_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4', [
      businessId,
      after,
      upTo,
      pageSize,
    ]);
    for (const r of rows) yield toEntry(r);
    if (rows.length < pageSize) return;
    after = Number(rows.at(-1)!.seq);
  }
}

/** In one statement (one snapshot): the business's head and the highest seq its entries reach. */
export async function chainEnd(db: Queryable, businessId: string): Promise<{ head: ChainHead | null; lastSeq: number }> {
  const [row] = await db.query<{ seq: string | null; hash: string | null; last: string | null }>(
    `SELECT h.seq, h.hash, (SELECT max(seq) FROM audit_log WHERE business_id = $1) AS last
       FROM (SELECT 1) AS one LEFT JOIN audit_heads h ON h.business_id = $1`,
    [businessId],
  );
  return { head: row?.seq == null ? null : { seq: Number(row.seq), hash: String(row.hash) }, lastSeq: Number(row?.last ?? 0) };
}

export async function chainHead(db: Queryable, businessId: string): Promise<ChainHead | null> {
  const [row] = await db.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_heads WHERE business_id = $1', [businessId]);
  return row ? { seq: Number(row.seq), hash: row.hash } : null;
}

/** Every business that has or should have a chain: each business, and any chain or entry of one that is gone (which verify reports). */
export async function chainedBusinesses(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    'SELECT id FROM businesses UNION SELECT business_id FROM audit_heads UNION SELECT DISTINCT business_id FROM audit_log ORDER BY id',
  );
  return rows.map((r) => String(r.id));
}
