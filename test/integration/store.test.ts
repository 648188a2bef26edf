// The store layer runs the same SQL on PostgreSQL and on the embedded PGlite: this suite runs on both.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createBusiness, findBusinessByApiKey } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { runningEmbeddedPostgres, startEmbeddedPostgres, type EmbeddedPostgres } from '../../store/embedded-postgres.ts';
import { deleteEntity } from '../../onboarding/entities.ts';
import { createEntity, ExternalIdTaken, getEntity, listEntities } from '../../store/entities.ts';
import { migrate } from '../../store/migrate.ts';
import { purgeRateLimitWindows, takeRateToken } from '../../store/rate-limit.ts';
import { countDownloadLinkUse, purgeExpiredLinkUses } from '../../store/download-link-uses.ts';
import { testEnv } from '../helpers/stack.ts';

function storeSuite(name: string, open: () => Promise<{ db: Db; close(): Promise<void> }>) {
  describe(`store on ${name}`, () => {
    let db: Db;
    let close: () => Promise<void>;
    before(async () => {
      ({ db, close } = await open());
      await migrate(db);
    });
    after(() => close());

    it('migrates idempotently', async () => {
      assert.deepEqual(await migrate(db), []);
    });

    it('creates, reads, lists and deletes entities with their requirements', async () => {
      const { business } = await createBusiness(db, { name: 'Store', binSponsored: true, environment: 'sandbox' });
      const id = await createEntity(db, business.id, {
        externalId: 'e-1',
        type: 'BUSINESS',
        requirements: [{ requirementSlug: 'kyb-legal-name', value: 'Ana Ltd' }],
      });
      const entity = await getEntity(db, business.id, id);
      assert.equal(entity?.externalId, 'e-1');
      assert.deepEqual(entity?.submittedRequirements[0]?.value, 'Ana Ltd');
      await createEntity(db, business.id, { externalId: 'e-2', type: 'INDIVIDUAL' });
      const page = await listEntities(db, business.id, { page: 1, limit: 1 });
      assert.equal(page.totalItems, 2);
      assert.deepEqual(
        page.items.map((e) => e.externalId),
        ['e-1'],
      );
      assert.deepEqual(await deleteEntity(db, business.id, id), { removed: [] }, 'deleted (it had no files)');
      assert.equal(await deleteEntity(db, business.id, id), null, 'gone already');
      assert.equal(await getEntity(db, business.id, id), undefined);
      assert.equal((await db.query('SELECT 1 FROM entity_requirements WHERE entity_id = $1', [id])).length, 0);
    });

    it('reports a duplicate externalId and rolls the whole creation back', async () => {
      const { business } = await createBusiness(db, { name: 'Dup', binSponsored: false, environment: 'sandbox' });
      await createEntity(db, business.id, { externalId: 'same', type: 'INDIVIDUAL' });
      await assert.rejects(
        createEntity(db, business.id, { externalId: 'same', type: 'BUSINESS', requirements: [{ requirementSlug: 'kyb-legal-name', value: 'X' }] }),
        ExternalIdTaken,
      );
      const n = await db.query('SELECT count(*) AS n FROM entities WHERE business_id = $1', [business.id]);
      assert.equal(Number(n[0]!.n), 1);
    });

    it('rolls back a transaction that throws', async () => {
      await assert.rejects(
        db.tx(async (q) => {
          await q.query("INSERT INTO businesses (id, name) VALUES ('6a1f5f7e-0000-4000-8000-000000000001', 'Ghost')");
          throw new Error('abort');
        }),
        /abort/,
      );
      assert.equal((await db.query("SELECT 1 FROM businesses WHERE name = 'Ghost'")).length, 0);
    });

    it('finds a business by API key and not by a wrong one', async () => {
      const { business, apiKey } = await createBusiness(db, { name: 'Keyed', binSponsored: false, environment: 'sandbox' });
      assert.equal((await findBusinessByApiKey(db, apiKey))?.id, business.id);
      assert.equal(await findBusinessByApiKey(db, `${apiKey}x`), undefined);
    });

    it('counts requests per window and purges old windows', async () => {
      const bucket = `b-${name}`;
      const now = 1_700_000_000_500;
      const first = await takeRateToken(db, bucket, 2, 1000, now);
      const second = await takeRateToken(db, bucket, 2, 1000, now + 100);
      const third = await takeRateToken(db, bucket, 2, 1000, now + 200);
      assert.deepEqual([first.allowed, second.allowed, third.allowed], [true, true, false]);
      assert.equal(third.retryAfterSeconds, 1);
      assert.equal((await takeRateToken(db, bucket, 2, 1000, now + 1000)).allowed, true, 'a new window starts afresh');
      assert.equal(await purgeRateLimitWindows(db, now + 400), 1);
    });

    it("counts a download link's uses, each its own number when at once, and purges the counts of expired links only", async () => {
      const at = new Date(Date.UTC(2030, 0, 1));
      const link = `link-${name}-${Date.now()}`;
      const counts = await Promise.all(Array.from({ length: 5 }, () => countDownloadLinkUse(db, link, at)));
      assert.deepEqual(counts.sort(), [1, 2, 3, 4, 5]);
      const other = `${link}-other`;
      assert.equal(await countDownloadLinkUse(db, other, new Date(at.getTime() + 60_000)), 1);
      assert.equal(await purgeExpiredLinkUses(db, new Date(at.getTime() + 1)), 1, 'the expired one goes');
      assert.equal(await countDownloadLinkUse(db, link, at), 1, 'its count went with it');
      assert.equal(await countDownloadLinkUse(db, other, new Date(at.getTime() + 60_000)), 2, 'the live one is kept');
    });
  });
}

storeSuite('PostgreSQL', async () => {
  const db = connectDb(testEnv('TEST_DATABASE_URL'), 3);
  return { db, close: () => db.close() };
});

storeSuite('PGlite (in memory, over its socket)', async () => {
  const pglite = await startEmbeddedPostgres({ dataDir: null, port: 0 });
  const db = connectDb(pglite.url, 3);
  return { db, close: async () => (await db.close(), await pglite.stop()) };
});

describe('embedded PGlite on disk', () => {
  let dir: string;
  let server: EmbeddedPostgres | undefined;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-pglite-'));
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps data across restarts and tells other processes where it is served', async () => {
    server = await startEmbeddedPostgres({ dataDir: dir, port: 0 });
    assert.equal(await runningEmbeddedPostgres(dir), server.url);
    let db = connectDb(server.url, 1);
    await migrate(db);
    const { business } = await createBusiness(db, { name: 'Persisted', binSponsored: false, environment: 'sandbox' });
    await db.close();
    await server.stop();
    server = undefined;
    assert.equal(await runningEmbeddedPostgres(dir), undefined);

    server = await startEmbeddedPostgres({ dataDir: dir, port: 0 });
    db = connectDb(server.url, 1);
    const rows = await db.query('SELECT name FROM businesses WHERE id = $1', [business.id]);
    await db.close();
    assert.deepEqual(rows, [{ name: 'Persisted' }]);
  });
});
