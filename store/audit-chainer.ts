// Links the audit log's entries into each business's hash chain (issue 21). Entries are written to
// audit_pending in the transaction of their change (store/audit-log.ts); here, once it has
// committed, a short transaction of its own locks the business's chain head, moves the committed
// waiting entries into audit_log with their seq, prevHash and hash, in the order they were
// written, and moves the head. So the head is held for one small transaction, never across another
// transaction's commit, and audit_log is only ever appended to.
//
// Three things start it: each commit that wrote entries (after LINK_DELAY_MS, so a busy business's
// entries are linked a few hundred at a time), a sweep every few seconds in the API and worker
// processes (entries whose process died between commit and link), and every reader of the chain
// (GET /audit-log, trace, evidence, `vouch audit verify`), which links first and so reads its own
// writes. Linkers of several processes take turns on the head's row lock; none links an entry twice.
import { entryHash, GENESIS_HASH, type AuditEntry, type AuditFields } from '../domain/audit-chain.ts';
import { iso, type Db, type Queryable, type Row } from './db.ts';

/** How long after a commit its entries wait, so that the entries of the commits meanwhile are linked with them. */
const LINK_DELAY_MS = 200;
/** Entries linked per transaction. */
const LINK_BATCH = 2000;
/** How often a process looks for entries left unlinked (their process died between commit and link). */
const SWEEP_EVERY_MS = 5000;

/** An entry's fields as stored, whether linked yet or not. */
export const toFields = (r: Row): Omit<AuditFields, 'seq' | 'prevHash'> => ({
  businessId: String(r.business_id),
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
});

/** Links every committed unlinked entry of the business; returns how many. */
export async function linkNow(db: Db, businessId: string): Promise<number> {
  // a reader's usual case, nothing waiting: one index probe, no transaction, no lock
  if ((await db.query('SELECT 1 FROM audit_pending WHERE business_id = $1 LIMIT 1', [businessId])).length === 0) return 0;
  let linked = 0;
  for (;;) {
    const n = await db.tx((tx) => linkSome(tx, businessId));
    linked += n;
    if (n < LINK_BATCH) return linked;
  }
}

/** Links the unlinked entries of every business that has some (a reader of several chains, the sweep). */
export async function linkAll(db: Db): Promise<number> {
  const rows = await db.query<{ business_id: string }>('SELECT DISTINCT business_id FROM audit_pending');
  let linked = 0;
  for (const r of rows) linked += await linkNow(db, String(r.business_id));
  return linked;
}

/** An entry's columns, in audit_pending and audit_log alike (the chain's three added by linking). */
export const AUDIT_COLUMNS = [
  'business_id',
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
] as const;

async function linkSome(db: Queryable, businessId: string): Promise<number> {
  const head = await lockHead(db, businessId);
  // read after the head's lock is held: every linker before us has committed, so none of these is linked
  const rows = await db.query(`SELECT written, ${AUDIT_COLUMNS.join(', ')} FROM audit_pending WHERE business_id = $1 ORDER BY written LIMIT $2`, [
    businessId,
    LINK_BATCH,
  ]);
  if (rows.length === 0) return 0;
  let { seq, hash: prevHash } = head;
  const values: unknown[] = [];
  const tuples: string[] = [];
  for (const r of rows) {
    seq += 1;
    const hash = entryHash({ ...toFields(r), seq, prevHash });
    const row = [...AUDIT_COLUMNS.map((c) => r[c]), seq, prevHash, hash];
    tuples.push(`(${row.map((_, i) => `$${values.length + i + 1}`).join(', ')})`);
    values.push(...row);
    prevHash = hash;
  }
  // three statements, in this order: audit_pending lets an entry go only once audit_log holds it
  await db.query(`INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}, seq, prev_hash, hash) VALUES ${tuples.join(', ')}`, values);
  await db.query('DELETE FROM audit_pending WHERE written = ANY($1::bigint[])', [rows.map((r) => String(r.written))]);
  await db.query('UPDATE audit_heads SET seq = $2, hash = $3 WHERE business_id = $1', [businessId, seq, prevHash]);
  return rows.length;
}

/** Locks the business's chain head until this linking transaction commits (made, the first time, at seq 0 and the genesis hash). */
async function lockHead(db: Queryable, businessId: string): Promise<{ seq: number; hash: string }> {
  for (;;) {
    const [head] = await db.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_heads WHERE business_id = $1 FOR UPDATE', [businessId]);
    if (head) return { seq: Number(head.seq), hash: head.hash };
    await db.query('INSERT INTO audit_heads (business_id, seq, hash) VALUES ($1, 0, $2) ON CONFLICT (business_id) DO NOTHING', [businessId, GENESIS_HASH]);
  }
}

type Due = { scheduled: Promise<void> | null; running: Promise<void> | null };
const dueOf = new WeakMap<Db, Map<string, Due>>();

/**
 * Links the businesses' entries LINK_DELAY_MS from now, once for every commit meanwhile (a process's
 * commits share one pending link per business). A failure (the database away) is left to the sweep.
 */
export function linkSoon(db: Db, businessIds: readonly string[]): Promise<void> {
  let byBusiness = dueOf.get(db);
  if (!byBusiness) dueOf.set(db, (byBusiness = new Map()));
  const map = byBusiness;
  return Promise.all(
    businessIds.map((businessId) => {
      let due = map.get(businessId);
      if (!due) map.set(businessId, (due = { scheduled: null, running: null }));
      const d = due;
      d.scheduled ??= (async () => {
        await d.running;
        await new Promise((resolve) => setTimeout(resolve, LINK_DELAY_MS));
        d.scheduled = null;
        const run = (d.running = linkNow(db, businessId).then(
          () => {},
          () => {},
        ));
        await run;
        if (d.running === run) d.running = null;
        if (!d.scheduled && !d.running) map.delete(businessId);
      })();
      return d.scheduled;
    }),
  ).then(() => {});
}

/**
 * The sweep: every SWEEP_EVERY_MS, links whatever is left unlinked; a tick while a sweep still runs
 * (a long backlog) is skipped. Returns its stop, which awaits a sweep under way.
 */
export function startLinkSweep(db: Db, onError: (err: unknown) => void, everyMs = SWEEP_EVERY_MS): () => Promise<void> {
  let current: Promise<void> | null = null;
  const timer = setInterval(() => {
    current ??= linkAll(db).then(
      () => void (current = null),
      (err: unknown) => {
        current = null;
        onError(err);
      },
    );
  }, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await current;
  };
}
