// The audit log proves itself (issue 21): the service cannot change or remove an entry (the table
// refuses UPDATE, DELETE and TRUNCATE), and whoever switches that off and edits the table is found
// by `vouch audit verify`, which names the business and the first entry changed, removed,
// reordered or cut off, and exits 1; an untouched chain verifies, exit 0. Against an insider who
// rewrites the chain consistently and moves the head (issue 37), signed checkpoints stored outside
// the database: the chain no longer matches one, and verify names it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { actAs } from '../../store/audit-actor.ts';
import { linkNow } from '../../store/audit-chainer.ts';
import { createBusiness, insertApiKey, revokeApiKey } from '../../store/businesses.ts';
import { connectDb, type Db, type Queryable } from '../../store/db.ts';
import { generateKeyRing } from '../../runtime/signing-keys.ts';
import { isolatedDatabaseUrl } from '../helpers/stack.ts';
import { checkpointPublicKeyOf } from '../../domain/audit-checkpoint.ts';
import { localDirectoryStore } from '../../files/local-directory.ts';
import { checkpointsOf, writeCheckpoints } from '../../store/audit-checkpoints.ts';

const run = promisify(execFile);
const cli = path.resolve(import.meta.dirname, '..', '..', 'cli', 'vouch.ts');

type Verified = { code: number; out: { intact: boolean; chains: { businessId: string; intact: boolean; firstBreak?: { seq: number; problem: string } }[] } };

describe('tampering with the audit log', () => {
  let url: string;
  let db: Db;
  let dataDir: string;
  before(async () => {
    url = await isolatedDatabaseUrl();
    db = connectDb(url, 2);
    dataDir = await mkdtemp(path.join(tmpdir(), 'vouch-audit-'));
    // the checkpoints' key ring, in the data directory every `vouch` call of this file reads
    await writeFile(path.join(dataDir, 'audit-checkpoint-keys.json'), JSON.stringify(generateKeyRing('audit-checkpoint', 'sandbox')), { mode: 0o600 });
  });
  after(async () => db?.close());

  async function verify(businessId: string): Promise<Verified> {
    return vouch('verify', businessId);
  }

  /** `vouch audit <command> --business ID`: its exit code and its JSON. */
  async function vouch(command: 'verify' | 'checkpoint', businessId: string): Promise<Verified> {
    const env = { ...process.env, DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    try {
      const { stdout } = await run(process.execPath, [cli, 'audit', command, '--business', businessId], { env });
      return { code: 0, out: JSON.parse(stdout) };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      assert.ok(e.stdout, e.stderr);
      return { code: e.code, out: JSON.parse(e.stdout) };
    }
  }

  /** A business with six entries: created, its first key, then two keys made and revoked. */
  async function chain(): Promise<string> {
    return actAs({ type: 'admin_cli', id: 'test' }, null, async () => {
      const { business } = await createBusiness(db, { name: 'Tamper', binSponsored: false, environment: 'sandbox' });
      for (let i = 0; i < 2; i++) {
        const { keyId } = await insertApiKey(db, business.id, 'sandbox');
        assert.ok(await revokeApiKey(db, business.id, keyId));
      }
      await linkNow(db, business.id); // not left to the chainer's moment: the edits below name entries by seq
      return business.id;
    });
  }

  /** Edits the table as a superuser would: with its append-only triggers switched off for the edit. */
  async function tamper(sql: string, params: unknown[]) {
    await db.tx(async (q) => {
      await q.query('ALTER TABLE audit_log DISABLE TRIGGER USER');
      await q.query(sql, params);
      await q.query('ALTER TABLE audit_log ENABLE TRIGGER USER');
    });
  }

  it('refuses to change, remove or empty entries', async () => {
    const businessId = await chain();
    for (const sql of ["UPDATE audit_log SET actor_id = 'mallory' WHERE business_id = $1", 'DELETE FROM audit_log WHERE business_id = $1']) {
      await assert.rejects(db.query(sql, [businessId]), /append-only/);
    }
    await assert.rejects(db.query('TRUNCATE audit_log'), /append-only/);
    const { code, out } = await verify(businessId);
    assert.equal(code, 0);
    assert.deepEqual(
      out.chains.map((c) => [c.businessId, c.intact]),
      [[businessId, true]],
    );
  });

  const cases: [string, (businessId: string) => Promise<void>, { seq: number; problem: string }][] = [
    ['a changed field', (b) => tamper("UPDATE audit_log SET actor_id = 'mallory' WHERE business_id = $1 AND seq = 3", [b]), { seq: 3, problem: 'changed' }],
    [
      'a changed field whose hash was recomputed by someone who knows the rule',
      (b) => tamper("UPDATE audit_log SET details = '{}', hash = repeat('a', 64) WHERE business_id = $1 AND seq = 2", [b]),
      { seq: 2, problem: 'changed' },
    ],
    ['a removed entry', (b) => tamper('DELETE FROM audit_log WHERE business_id = $1 AND seq = 4', [b]), { seq: 4, problem: 'removed' }],
    [
      'two entries swapped',
      async (b) => {
        await tamper('UPDATE audit_log SET seq = -2 WHERE business_id = $1 AND seq = 2', [b]);
        await tamper('UPDATE audit_log SET seq = 2 WHERE business_id = $1 AND seq = 3', [b]);
        await tamper('UPDATE audit_log SET seq = 3 WHERE business_id = $1 AND seq = -2', [b]);
      },
      { seq: 2, problem: 'reordered' },
    ],
    ['the last entries cut off', (b) => tamper('DELETE FROM audit_log WHERE business_id = $1 AND seq >= 5', [b]), { seq: 5, problem: 'cut-off' }],
  ];
  for (const [what, edit, expected] of cases) {
    it(`finds ${what}: the first entry not as written, exit code 1`, async () => {
      const businessId = await chain();
      assert.equal((await verify(businessId)).code, 0, 'intact before');
      await edit(businessId);
      const { code, out } = await verify(businessId);
      assert.equal(code, 1);
      assert.equal(out.intact, false);
      const [c] = out.chains;
      assert.equal(c?.businessId, businessId);
      assert.deepEqual({ seq: c?.firstBreak?.seq, problem: c?.firstBreak?.problem }, expected);
    });
  }

  describe('against signed checkpoints', () => {
    /** The entry at seq, as stored. */
    const entryAt = async (businessId: string, seq: number) =>
      (await db.query<{ hash: string }>('SELECT hash FROM audit_log WHERE business_id = $1 AND seq = $2', [businessId, seq]))[0]!;

    it("finds the last entries cut and the head moved back by someone with the service's own credentials: exit 1, naming the checkpoint", async () => {
      const businessId = await chain();
      const signed = await vouch('checkpoint', businessId);
      assert.equal(signed.code, 0, JSON.stringify(signed.out));
      const [checkpoint] = (signed.out as unknown as { checkpoints: { seq: number; hash: string; signature: string }[] }).checkpoints;
      assert.equal(checkpoint?.seq, 6, 'the head: business created, first key, two keys made and revoked');
      const before = await verify(businessId);
      assert.equal(before.code, 0, JSON.stringify(before.out));
      // the insider: the last five entries cut, the head moved back to what is left, every trigger off meanwhile
      await db.tx(async (q) => {
        await q.query('ALTER TABLE audit_log DISABLE TRIGGER USER');
        await q.query('ALTER TABLE audit_heads DISABLE TRIGGER USER');
        await q.query('DELETE FROM audit_log WHERE business_id = $1 AND seq > 2', [businessId]);
        await q.query('UPDATE audit_heads SET seq = 2, hash = (SELECT hash FROM audit_log WHERE business_id = $1 AND seq = 2) WHERE business_id = $1', [
          businessId,
        ]);
        await q.query('ALTER TABLE audit_heads ENABLE TRIGGER USER');
        await q.query('ALTER TABLE audit_log ENABLE TRIGGER USER');
      });
      const { code, out } = await verify(businessId);
      assert.equal(code, 1, JSON.stringify(out));
      const c = out.chains[0] as Verified['out']['chains'][number] & { firstBreak?: { checkpoint?: string; detail: string } };
      assert.equal(c.firstBreak?.problem, 'checkpoint');
      assert.match(c.firstBreak!.checkpoint!, new RegExp(`^audit-checkpoints/${businessId}/000000000000006-`));
      assert.match(c.firstBreak!.detail, /attests seq 6; the chain ends at 2/);
    });

    it('finds a chain rewritten after a checkpoint with its hashes recomputed, and a checkpoint removed or forged', async () => {
      const businessId = await chain();
      assert.equal((await vouch('checkpoint', businessId)).code, 0);
      const { hash } = await entryAt(businessId, 6);
      // rewritten from seq 3 on: every hash recomputed by the chain's own rule, the head moved with them
      const { entryHash } = await import('../../domain/audit-chain.ts');
      const { chainOf } = await import('../../store/audit-log.ts');
      const entries = [];
      for await (const e of chainOf(db, businessId)) entries.push(e);
      let prevHash = entries[1]!.hash;
      const rewritten = entries.slice(2).map((e, i) => {
        const f = { ...e, actorId: i === 0 ? 'mallory' : e.actorId, prevHash };
        const r = { ...f, hash: entryHash(f) };
        prevHash = r.hash;
        return r;
      });
      await db.tx(async (q) => {
        await q.query('ALTER TABLE audit_log DISABLE TRIGGER USER');
        await q.query('ALTER TABLE audit_heads DISABLE TRIGGER USER');
        for (const r of rewritten)
          await q.query('UPDATE audit_log SET actor_id = $3, prev_hash = $4, hash = $5 WHERE business_id = $1 AND seq = $2', [
            businessId,
            r.seq,
            r.actorId,
            r.prevHash,
            r.hash,
          ]);
        await q.query('UPDATE audit_heads SET hash = $2 WHERE business_id = $1', [businessId, prevHash]);
        await q.query('ALTER TABLE audit_heads ENABLE TRIGGER USER');
        await q.query('ALTER TABLE audit_log ENABLE TRIGGER USER');
      });
      assert.notEqual(prevHash, hash);
      const { code, out } = await verify(businessId);
      assert.equal(code, 1);
      assert.equal(out.chains[0]?.firstBreak?.problem, 'checkpoint', JSON.stringify(out.chains[0]));

      // a checkpoint whose document is gone from the file store, and a forged row, are reported
      const other = await chain();
      assert.equal((await vouch('checkpoint', other)).code, 0);
      const [row] = await db.query<{ object_key: string }>('SELECT object_key FROM audit_checkpoints WHERE business_id = $1', [other]);
      await rm(path.join(dataDir, 'files', ...row!.object_key.split('/')), { force: true });
      await db.query(
        `INSERT INTO audit_checkpoints (business_id, seq, hash, at, key_id, signature, object_key)
         VALUES ($1, 7, 'f', '2026-01-01T00:00:00.000Z', 'k', 'c2ln', 'forged')`,
        [other],
      );
      const reported = await verify(other);
      assert.equal(reported.code, 1);
      const problems = (reported.out.chains[0] as unknown as { checkpointProblems: { checkpoint: string; problem: string }[] }).checkpointProblems;
      assert.ok(
        problems.some((p) => p.problem === 'listed in the database, gone from the file store'),
        JSON.stringify(problems),
      );
      assert.ok(
        problems.some((p) => p.checkpoint === 'forged' && /not among the checkpoint keys/.test(p.problem)),
        JSON.stringify(problems),
      );
    });

    it('signs only heads that moved, and a chain that only grew after its checkpoints verifies', async () => {
      const businessId = await chain();
      assert.equal(((await vouch('checkpoint', businessId)).out as unknown as { checkpoints: unknown[] }).checkpoints.length, 1);
      assert.equal(((await vouch('checkpoint', businessId)).out as unknown as { checkpoints: unknown[] }).checkpoints.length, 0, 'the head did not move');
      await actAs({ type: 'admin_cli', id: 'test' }, null, async () => {
        await insertApiKey(db, businessId, 'sandbox');
        await linkNow(db, businessId);
      });
      assert.equal(((await vouch('checkpoint', businessId)).out as unknown as { checkpoints: unknown[] }).checkpoints.length, 1);
      const { code, out } = await verify(businessId);
      assert.equal(code, 0, JSON.stringify(out));
      assert.equal((out.chains[0] as unknown as { checkpoints: { attested: number } }).checkpoints.attested, 2);
    });

    it('finds a chain removed whole — entries, head and checkpoint rows — from the checkpoints in the file store', async () => {
      const businessId = await chain();
      assert.equal((await vouch('checkpoint', businessId)).code, 0);
      await db.tx(async (q) => {
        for (const t of ['audit_log', 'audit_heads', 'audit_checkpoints']) await q.query(`ALTER TABLE ${t} DISABLE TRIGGER USER`);
        for (const t of ['audit_log', 'audit_heads', 'audit_checkpoints']) await q.query(`DELETE FROM ${t} WHERE business_id = $1`, [businessId]);
        for (const t of ['audit_log', 'audit_heads', 'audit_checkpoints']) await q.query(`ALTER TABLE ${t} ENABLE TRIGGER USER`);
      });
      const { code, out } = await verify(businessId);
      assert.equal(code, 1, JSON.stringify(out));
      assert.equal(out.chains[0]?.firstBreak?.problem, 'checkpoint');
      // and verify of every business names it too: its business is still there
      const env = { ...process.env, DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
      const all = await run(process.execPath, [cli, 'audit', 'verify'], { env }).then(
        () => null,
        (err: { stdout: string }) => JSON.parse(err.stdout) as Verified['out'],
      );
      assert.ok(all?.chains.some((c) => c.businessId === businessId && !c.intact));
    });

    it('gives no false alarm for a checkpoint written while verify reads (its document first, its row after)', async () => {
      const businessId = await chain();
      const documents = localDirectoryStore(path.join(dataDir, 'files'));
      const ring = generateKeyRing('audit-checkpoint', 'sandbox');
      // the writer signs at the worst moment: just before verify reads the rows of the database
      let wrote = false;
      const racing: Queryable = {
        async query(sql, params) {
          if (!wrote && sql.startsWith('SELECT * FROM audit_checkpoints')) {
            wrote = true;
            await writeCheckpoints(db, documents, ring[0]!, new Date(), businessId);
          }
          return db.query(sql, params);
        },
      };
      const found = await checkpointsOf(racing, documents, businessId, ring.map(checkpointPublicKeyOf));
      assert.ok(wrote);
      assert.deepEqual(found.problems, []);
    });
  });
});
