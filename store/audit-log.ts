// The audit log's store (issue 21): entries are collected during a transaction and chained and
// written last, just before it commits (Tx.beforeCommit), so no change commits without its entry
// and no entry without its change. The chain head of each business touched is locked only then, in
// business-id order, after every other lock the transaction holds: it adds no lock-order cycle, and
// it is held for three statements. domain/audit-chain.ts holds the hashing rules.
import { randomUUID } from 'node:crypto';
import { isAuditAction, type AuditAction } from '../domain/audit-actions.ts';
import { canonicalDetails, entryHash, GENESIS_HASH, type AuditEntry, type AuditFields, type ChainHead } from '../domain/audit-chain.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';
import { actingNow } from './audit-actor.ts';
import { iso, isTx, type Queryable, type Row, type Tx } from './db.ts';

/** What a writer says about its change; who, when and the chain are filled in here. */
export type AuditDraft = {
  businessId: string;
  action: AuditAction;
  entityId?: string | null;
  subject?: { type: string; id: string } | null;
  details?: AuditFields['details'];
  /** `ok` (the default) or a refusal's code. */
  outcome?: string;
};

type Pending = Omit<AuditFields, 'seq' | 'prevHash'>;

const pending = new WeakMap<Tx, Pending[]>();

/** Records an entry in q's transaction; it is written, chained, when the transaction commits (and not at all if it rolls back). */
export function recordAudit(q: Queryable, draft: AuditDraft): void {
  if (!isTx(q)) throw new Error(`audit entry ${draft.action} outside a transaction: write it in the transaction of its change`);
  if (!isAuditAction(draft.action)) throw new Error(`unknown audit action ${String(draft.action)}`);
  const { actor, requestId } = actingNow();
  const entry: Pending = {
    businessId: draft.businessId,
    id: randomUUID(),
    occurredAt: new Date().toISOString(),
    actorType: actor.type,
    actorId: actor.id,
    runId: actor.type === 'workflow' ? actor.runId : null,
    requestId,
    action: draft.action,
    entityId: draft.entityId ?? null,
    subjectType: draft.subject?.type ?? null,
    subjectId: draft.subject?.id ?? null,
    details: draft.details ?? {},
    outcome: draft.outcome ?? 'ok',
  };
  let list = pending.get(q);
  if (!list) {
    pending.set(q, (list = []));
    q.beforeCommit(() => writeChained(q, list!));
  }
  list.push(entry);
}

/** Records one entry in a transaction of its own (a read of personal data, a refusal: nothing else to commit with). */
export async function recordAuditAlone(db: { tx<T>(fn: (q: Tx) => Promise<T>): Promise<T> }, draft: AuditDraft): Promise<void> {
  await db.tx(async (q) => recordAudit(q, draft));
}

const COLUMNS = [
  'business_id',
  'seq',
  'id',
  'occurred_at',
  'actor_type',
  'actor_id',
  'run_id',
  'request_id',
  'action',
  'entity_id',
  'subject_type',
  'subject_id',
  'details',
  'outcome',
  'prev_hash',
  'hash',
] as const;

async function writeChained(q: Queryable, entries: Pending[]): Promise<void> {
  const businesses = [...new Set(entries.map((e) => e.businessId))].sort();
  for (const businessId of businesses) {
    const head = await lockHead(q, businessId);
    let seq = head.seq;
    let prevHash = head.hash;
    const values: unknown[] = [businessId];
    const rows: string[] = [];
    for (const e of entries.filter((x) => x.businessId === businessId)) {
      seq += 1;
      const fields: AuditFields = { ...e, seq, prevHash };
      const hash = entryHash(fields);
      const row = [
        seq,
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
        prevHash,
        hash,
      ];
      rows.push(`($1, ${row.map((_, i) => `$${values.length + i + 1}`).join(', ')})`);
      values.push(...row);
      prevHash = hash;
    }
    // the entries and the new head in one statement: the head's lock is held as briefly as a commit allows
    values.push(seq, prevHash);
    await q.query(
      `WITH written AS (INSERT INTO audit_log (${COLUMNS.join(', ')}) VALUES ${rows.join(', ')})
       UPDATE audit_heads SET seq = $${values.length - 1}, hash = $${values.length} WHERE business_id = $1`,
      values,
    );
  }
}

/** Locks the business's chain head until commit (made, the first time, at seq 0 and the genesis hash). */
async function lockHead(q: Queryable, businessId: string): Promise<{ seq: number; hash: string }> {
  for (;;) {
    const [head] = await q.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_heads WHERE business_id = $1 FOR UPDATE', [businessId]);
    if (head) return { seq: Number(head.seq), hash: head.hash };
    await q.query('INSERT INTO audit_heads (business_id, seq, hash) VALUES ($1, 0, $2) ON CONFLICT (business_id) DO NOTHING', [businessId, GENESIS_HASH]);
  }
}

const toEntry = (r: Row): AuditEntry => ({
  businessId: String(r.business_id),
  seq: Number(r.seq),
  id: String(r.id),
  occurredAt: iso(r.occurred_at),
  actorType: r.actor_type as AuditEntry['actorType'],
  actorId: String(r.actor_id),
  runId: r.run_id == null ? null : String(r.run_id),
  requestId: r.request_id == null ? null : String(r.request_id),
  action: String(r.action),
  entityId: r.entity_id == null ? null : String(r.entity_id),
  subjectType: r.subject_type == null ? null : String(r.subject_type),
  subjectId: r.subject_id == null ? null : String(r.subject_id),
  details: JSON.parse(String(r.details)) as AuditEntry['details'],
  outcome: String(r.outcome),
  prevHash: String(r.prev_hash),
  hash: String(r.hash),
});

export type AuditFilter = { entityId?: string | undefined; action?: AuditAction | undefined; from?: string | undefined; to?: string | undefined };

/**
 * A business's entries, oldest first (seq order: a page never shifts as entries are added). Unfiltered,
 * a page is a range of seq and the count is the head's seq (a chain's seqs run 1..head without a gap):
 * reading page 10,000 of a long log costs what page 1 does, with no count over millions of rows.
 */
export async function auditPage(q: Queryable, businessId: string, filter: AuditFilter, page: Page) {
  if (!filter.entityId && !filter.action && !filter.from && !filter.to) {
    const from = offsetOf(page);
    const rows = await q.query('SELECT * FROM audit_log WHERE business_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq', [businessId, from, from + page.limit]);
    return { items: rows.map(toEntry), totalItems: (await chainHead(q, businessId))?.seq ?? 0 };
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
  const [count] = await q.query<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE ${where.join(' AND ')}`, params);
  const rows = await q.query(`SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${page.limit} OFFSET ${offsetOf(page)}`, params);
  return { items: rows.map(toEntry), totalItems: Number(count?.n ?? 0) };
}

/** Every entry naming an entity (its own and its members' links), oldest first; for trace and evidence. */
export async function auditOfEntity(q: Queryable, entityId: string): Promise<AuditEntry[]> {
  return (await q.query('SELECT * FROM audit_log WHERE entity_id = $1 OR subject_id = $2 ORDER BY business_id, seq', [entityId, entityId])).map(toEntry);
}

/** A business's chain in seq order, read in pages (a chain can be millions long). */
export async function* chainOf(q: Queryable, businessId: string, pageSize = 5000): AsyncGenerator<AuditEntry> {
  let after = 0;
  for (;;) {
    const rows = await q.query('SELECT * FROM audit_log WHERE business_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [businessId, after, pageSize]);
    for (const r of rows) yield toEntry(r);
    if (rows.length < pageSize) return;
    after = Number(rows.at(-1)!.seq);
  }
}

export async function chainHead(q: Queryable, businessId: string): Promise<ChainHead | null> {
  const [row] = await q.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_heads WHERE business_id = $1', [businessId]);
  return row ? { seq: Number(row.seq), hash: row.hash } : null;
}

/** Every business with a chain (or entries without a head, which verify reports). */
export async function chainedBusinesses(q: Queryable): Promise<string[]> {
  const rows = await q.query<{ id: string }>('SELECT business_id AS id FROM audit_heads UNION SELECT DISTINCT business_id FROM audit_log ORDER BY id');
  return rows.map((r) => String(r.id));
}
