// The audit chain is linked after commit (store/audit-chainer.ts): an entry is written to
// audit_pending in its change's transaction and moved into audit_log, linked, moments later, once.
// Here: many transactions of one business at once and two processes' linkers racing still make one
// chain without a gap or a twice-linked entry; entries a dead process left waiting are linked by the
// sweep; closing the database waits for the linking a commit started; and a waiting entry can be
// neither changed nor removed except into audit_log.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { verifyChain, type AuditEntry } from '../../domain/audit-chain.ts';
import { actAs } from '../../store/audit-actor.ts';
import { linkAll, linkNow, startLinkSweep } from '../../store/audit-chainer.ts';
import { chainHead, chainOf, recordAudit } from '../../store/audit-log.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { isolatedDatabaseUrl } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

describe('the audit chain, linked after commit', () => {
  let url: string;
  let db: Db;
  before(async () => {
    url = await isolatedDatabaseUrl();
    db = connectDb(url, 8);
  });
  after(async () => db?.close());

  const asTest = <T>(fn: () => Promise<T>) => actAs({ type: 'admin_cli', id: 'chainer-test' }, null, fn);
  /** One transaction recording `n` entries for the business, marked so they can be found. */
  const commit = (on: Db, businessId: string, n: number, marker = randomUUID()) =>
    asTest(() =>
      on.tx(async (q) => {
        for (let i = 0; i < n; i++) recordAudit(q, { businessId, action: 'entity.created', subject: { type: 'entity', id: marker }, details: { i } });
      }),
    );
  const unlinked = async (businessId: string) =>
    Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM audit_pending WHERE business_id = $1', [businessId]))[0]!.n);
  const chain = async (businessId: string) => {
    const entries: AuditEntry[] = [];
    for await (const e of chainOf(db, businessId)) entries.push(e);
    return entries;
  };

  it('many transactions of one business at once, and linkers of two processes racing: one chain, 1..n, each entry linked once', async () => {
    const businessId = randomUUID();
    const other = connectDb(url, 4); // a second process's pool
    try {
      const commits = Array.from({ length: 60 }, (_, i) => commit(i % 2 ? other : db, businessId, 3));
      const racing = Array.from({ length: 6 }, (_, i) => linkNow(i % 2 ? other : db, businessId));
      await Promise.all([...commits, ...racing]);
      await Promise.all([linkNow(db, businessId), linkNow(other, businessId)]);
    } finally {
      await other.close();
    }
    const entries = await chain(businessId);
    assert.equal(entries.length, 180);
    assert.deepEqual(
      entries.map((e) => e.seq),
      Array.from({ length: 180 }, (_, i) => i + 1),
    );
    assert.equal(new Set(entries.map((e) => e.id)).size, 180);
    assert.equal(verifyChain(entries, await chainHead(db, businessId)), null);
    assert.equal(await unlinked(businessId), 0);
  });

  it("one transaction of 6,000 entries (more than one statement's parameters hold) is written whole and linked in order", async () => {
    const businessId = randomUUID();
    await commit(db, businessId, 6000);
    await linkNow(db, businessId);
    const entries = await chain(businessId);
    assert.equal(entries.length, 6000);
    assert.deepEqual(
      entries.map((e) => e.details.i),
      Array.from({ length: 6000 }, (_, i) => i),
      'in the order recorded',
    );
    assert.equal(verifyChain(entries, await chainHead(db, businessId)), null);
  });

  it('a commit links its entries moments later by itself, and closing the database waits for that linking', async () => {
    const businessId = randomUUID();
    const own = connectDb(url, 2);
    await commit(own, businessId, 2);
    assert.equal(await unlinked(businessId), 2, 'written unlinked, in the transaction of the change');
    await own.close(); // as a CLI command ends right after its write
    assert.equal(await unlinked(businessId), 0);
    assert.equal(verifyChain(await chain(businessId), await chainHead(db, businessId)), null);
  });

  it('entries a process left unlinked (it died between commit and link) are linked by the sweep', async () => {
    const businessId = randomUUID();
    // a chain to continue, written by a process that has ended (its close waits for its link): no
    // link of this pool's is scheduled for the business, so only the sweep can link what follows
    const ended = connectDb(url, 1);
    await commit(ended, businessId, 1);
    await ended.close();
    assert.equal(await unlinked(businessId), 0);
    // what a process killed after its COMMIT leaves: committed entries, no link
    await db.query(
      `INSERT INTO audit_pending (business_id, id, occurred_at, actor_type, actor_id, action, details, outcome)
       SELECT $1, gen_random_uuid(), date_trunc('milliseconds', now()), 'system', 'vouch-worker', 'entity.created', '{}', 'ok' FROM generate_series(1, 3)`,
      [businessId],
    );
    assert.equal(await unlinked(businessId), 3);
    await new Promise((r) => setTimeout(r, 500)); // longer than a commit's link waits: nothing else links them
    assert.equal(await unlinked(businessId), 3);
    const errors: unknown[] = [];
    const stop = startLinkSweep(db, (err) => errors.push(err), 50);
    try {
      await eventually('every entry linked', async () => (await unlinked(businessId)) === 0, { timeoutMs: 5000, everyMs: 25 });
    } finally {
      await stop();
    }
    assert.deepEqual(errors, []);
    assert.equal(await unlinked(businessId), 0);
    const entries = await chain(businessId);
    assert.deepEqual(
      entries.map((e) => e.seq),
      [1, 2, 3, 4],
    );
    assert.equal(verifyChain(entries, await chainHead(db, businessId)), null);
  });

  it('a waiting entry is never changed, and leaves audit_pending only into audit_log, linked; a linked one is never changed', async () => {
    const businessId = randomUUID();
    await db.query(
      `INSERT INTO audit_pending (business_id, id, occurred_at, actor_type, actor_id, action, details, outcome)
       VALUES ($1, gen_random_uuid(), date_trunc('milliseconds', now()), 'system', 'vouch-worker', 'entity.created', '{}', 'ok')`,
      [businessId],
    );
    await assert.rejects(db.query("UPDATE audit_pending SET actor_id = 'mallory' WHERE business_id = $1", [businessId]), /append-only/);
    await assert.rejects(db.query('DELETE FROM audit_pending WHERE business_id = $1', [businessId]), /append-only/, 'not removed unlinked');
    await assert.rejects(db.query('TRUNCATE audit_pending'), /append-only/);
    assert.equal(await linkAll(db), 1);
    assert.equal(await unlinked(businessId), 0);
    await assert.rejects(db.query("UPDATE audit_log SET hash = repeat('b', 64) WHERE business_id = $1", [businessId]), /append-only/);
    await assert.rejects(db.query('DELETE FROM audit_log WHERE business_id = $1', [businessId]), /append-only/);
    const entries = await chain(businessId);
    assert.deepEqual(
      entries.map((e) => [e.seq, e.actorId]),
      [[1, 'vouch-worker']],
    );
    assert.equal(verifyChain(entries, await chainHead(db, businessId)), null);
  });
});
