// The service's own database credentials cannot rewrite the record (issue 37). On PostgreSQL the
// migrations run as the schema's owner (`vouch db migrate` with DATABASE_MIGRATION_URL) and the
// service as a role of its own (DATABASE_URL): it does its work — entities, decisions, the audit
// chain's linking, a deletion whose cascade takes decisions with it — but may not change or remove
// an audit entry, a checkpoint or a decision, switch a trigger off, or change the schema; and it
// says so when migrations are pending rather than trying them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../runtime/config.ts';
import { openDatabase } from '../../runtime/database.ts';
import { actAs } from '../../store/audit-actor.ts';
import { linkNow } from '../../store/audit-chainer.ts';
import { verifyChainOf } from '../../store/audit-verify.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { deleteEntity } from '../../onboarding/entities.ts';
import { createEntity } from '../../store/entities.ts';
import { migrate } from '../../store/migrate.ts';
import { approveDirectly } from '../helpers/decisions.ts';
import { testEnv } from '../helpers/stack.ts';

const run = promisify(execFile);
const cli = path.resolve(import.meta.dirname, '..', '..', 'cli', 'vouch.ts');

describe("the service's database role", () => {
  const tag = randomUUID().replaceAll('-', '').slice(0, 12);
  const [owner, service, schema] = [`vouch_owner_${tag}`, `vouch_service_${tag}`, `roles_${tag}`];
  let admin: Db;
  let ownerUrl: string;
  let serviceUrl: string;
  let db: Db;
  let dataDir: string;

  const urlAs = (user: string) => {
    const url = new URL(testEnv('TEST_DATABASE_URL'));
    url.username = user;
    url.password = '';
    url.searchParams.set('options', `-c search_path=${schema}`);
    return url.toString();
  };

  before(async () => {
    admin = connectDb(testEnv('TEST_DATABASE_URL'), 1);
    await admin.query(`CREATE ROLE ${owner} LOGIN`);
    await admin.query(`CREATE ROLE ${service} LOGIN`);
    await admin.query(`CREATE SCHEMA ${schema} AUTHORIZATION ${owner}`);
    [ownerUrl, serviceUrl] = [urlAs(owner), urlAs(service)];
    dataDir = await mkdtemp(path.join(tmpdir(), 'vouch-roles-'));
    const env = { ...process.env, DATABASE_URL: serviceUrl, DATABASE_MIGRATION_URL: ownerUrl, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const { stdout } = await run(process.execPath, [cli, 'db', 'migrate'], { env });
    const migrated = JSON.parse(stdout);
    assert.ok(migrated.applied.includes('029_audit_checkpoints'), stdout);
    assert.equal(migrated.granted, service, "granted to DATABASE_URL's user");
    db = connectDb(serviceUrl, 2);
  });
  after(async () => {
    await db?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    for (const role of [owner, service]) {
      await admin.query(`DROP OWNED BY ${role}`).catch(() => {});
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
    }
    await admin.close();
  });

  it('does its work as the service: entities, a decision, the chain linked, a deletion taking the decision with it', async () => {
    const config = loadConfig({ ...process.env, DATABASE_URL: serviceUrl, DATA_DIR: dataDir });
    const opened = await openDatabase(config); // nothing pending: the service's role changes nothing in the schema
    await opened.close();
    await actAs({ type: 'admin_cli', id: 'roles-test' }, null, async () => {
      const { business } = await createBusiness(db, { name: 'Roles', binSponsored: false, environment: 'sandbox' });
      const person = await createEntity(db, business.id, { externalId: 'roles-1', type: 'INDIVIDUAL' });
      await approveDirectly(db, person);
      await linkNow(db, business.id); // (or the link started after the commits did it already)
      const [head] = await db.query<{ seq: string }>('SELECT seq FROM audit_heads WHERE business_id = $1', [business.id]);
      assert.ok(Number(head?.seq) >= 3, 'the chain linked by the service');
      assert.ok(await deleteEntity(db, business.id, person));
      await linkNow(db, business.id);
      assert.equal((await db.query('SELECT 1 FROM record_decisions WHERE entity_id = $1', [person])).length, 0, 'gone with its entity (cascade)');
    });
  });

  it('may not change or remove the record, switch its guards off, or change the schema', async () => {
    const [entry] = await db.query<{ business_id: string }>('SELECT business_id FROM audit_log LIMIT 1');
    assert.ok(entry, 'an entry to attack');
    const refused: [string, RegExp][] = [
      ["UPDATE audit_log SET actor_id = 'mallory'", /permission denied/],
      ['DELETE FROM audit_log', /permission denied/],
      ['TRUNCATE audit_log', /permission denied/],
      ['ALTER TABLE audit_log DISABLE TRIGGER USER', /must be owner/],
      ['DROP TRIGGER audit_log_append_only ON audit_log', /must be owner/],
      ['DELETE FROM audit_heads', /permission denied/],
      ["UPDATE audit_pending SET actor_id = 'mallory'", /permission denied/],
      ["UPDATE record_decisions SET status = 'APPROVED'", /permission denied/],
      ['DELETE FROM record_decisions', /permission denied/],
      ['DELETE FROM audit_checkpoints', /permission denied/],
      ['DELETE FROM entity_digest_keys', /permission denied/],
      ['ALTER TABLE record_decisions DISABLE TRIGGER USER', /must be owner/],
      ['CREATE TABLE shadow (x int)', /permission denied for schema/],
      ['DROP VIEW entities', /must be owner/],
    ];
    for (const [sql, why] of refused) await assert.rejects(db.query(sql), why, sql);
    assert.ok((await db.query('SELECT 1 FROM audit_log')).length > 0, 'every entry still there');
  });

  it('may link only as linking does: no entry of its own making, none taken out of audit_pending before it is in the chain, no head moved back', async () => {
    // a business of this test's own, whose entries no one else links meanwhile (no link is started after a commit here)
    const businessId = randomUUID();
    const GENESIS = '0'.repeat(64);
    const copy = (business: string, seq: number, prev: string) =>
      db.query(
        `INSERT INTO audit_log (business_id, seq, id, occurred_at, actor_type, actor_id, run_id, request_id, action, entity_id, subject_type, subject_id,
                                details, outcome, prev_hash, hash)
         SELECT $2, $3, id, occurred_at, actor_type, actor_id, run_id, request_id, action, entity_id, subject_type, subject_id, details, outcome,
                $4, repeat('a', 64) FROM audit_pending WHERE id = $1`,
        [waiting, business, seq, prev],
      );
    await assert.rejects(
      db.query(
        `INSERT INTO audit_log (business_id, seq, id, occurred_at, actor_type, actor_id, action, details, outcome, prev_hash, hash)
         VALUES ($1, 1, $2, now(), 'system', 'mallory', 'retention.policy_set', '{}', 'ok', $3, repeat('f', 64))`,
        [businessId, randomUUID(), GENESIS],
      ),
      /only an entry waiting in audit_pending is linked/,
      'an entry of its own making',
    );
    // an entry waiting for its link, as a transaction writes it
    const waiting = randomUUID();
    await db.query(
      `INSERT INTO audit_pending (business_id, id, occurred_at, actor_type, actor_id, action, details, outcome)
       VALUES ($1, $2, date_trunc('milliseconds', now()), 'admin_cli', 'roles-test', 'retention.policy_set', '{"years":3}', 'ok')`,
      [businessId, waiting],
    );
    await assert.rejects(db.query('DELETE FROM audit_pending WHERE id = $1', [waiting]), /leaves audit_pending only into audit_log/, 'removed unlinked');
    await assert.rejects(copy(randomUUID(), 1, GENESIS), /only an entry waiting in audit_pending is linked/, 'under another business');
    await assert.rejects(copy(businessId, 5, GENESIS), /at its business's next seq/, 'as written, not at its place');
    // linking itself still works under these rules
    assert.equal(await linkNow(db, businessId), 1);
    assert.equal((await db.query('SELECT 1 FROM audit_pending WHERE id = $1', [waiting])).length, 0);
    await assert.rejects(db.query('UPDATE audit_heads SET seq = seq - 1 WHERE business_id = $1', [businessId]), /moves forward only/);
    await assert.rejects(db.query("UPDATE audit_heads SET hash = repeat('b', 64) WHERE business_id = $1", [businessId]), /names an entry of its chain/);
    await assert.rejects(db.query('DELETE FROM audit_heads WHERE business_id = $1', [businessId]), /permission denied/);
    const verdict = await verifyChainOf(db, businessId);
    assert.equal(verdict.intact, true, JSON.stringify(verdict.firstBreak));
  });

  it('says to run `vouch db migrate` when a migration is pending, rather than trying it', async () => {
    const ownerDb = connectDb(ownerUrl, 1);
    try {
      await ownerDb.query("DELETE FROM schema_migrations WHERE version = '029_audit_checkpoints'");
      await assert.rejects(migrate(db), /1 database migration\(s\) are pending \(029_audit_checkpoints\).*vouch db migrate/);
    } finally {
      await ownerDb.query("INSERT INTO schema_migrations (version) VALUES ('029_audit_checkpoints') ON CONFLICT DO NOTHING");
      await ownerDb.close();
    }
  });
});
