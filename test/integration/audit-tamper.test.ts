// The audit log proves itself (issue 21): the service cannot change or remove an entry (the table
// refuses UPDATE, DELETE and TRUNCATE), and whoever switches that off and edits the table is found
// by `vouch audit verify`, which names the business and the first entry changed, removed,
// reordered or cut off, and exits 1; an untouched chain verifies, exit 0.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { actAs } from '../../store/audit-actor.ts';
import { linkNow } from '../../store/audit-chainer.ts';
import { createBusiness, insertApiKey, revokeApiKey } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { isolatedDatabaseUrl } from '../helpers/stack.ts';

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
  });
  after(async () => db?.close());

  async function verify(businessId: string): Promise<Verified> {
    const env = { ...process.env, DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    try {
      const { stdout } = await run(process.execPath, [cli, 'audit', 'verify', '--business', businessId], { env });
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
});
