// Bytes that no row names leave the file store, and no key is forgotten before its bytes are gone
// (issue 18): housekeeping's removeStrayFileBytes against a real database and a local directory
// store. A pass that dies after taking its keys (the worker killed) leaves them due again when its
// lease runs out; a key once taken can no longer be claimed by an upload.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { createHousekeepingActivities } from '../../activities/housekeeping.ts';
import { localDirectoryStore } from '../../files/local-directory.ts';
import type { FileStore } from '../../files/file-store.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { createEntity } from '../../store/entities.ts';
import { claimBytes, discardBytes, expectBytes, takeDueBytes } from '../../store/files.ts';
import { isolatedDatabaseUrl } from '../helpers/stack.ts';

describe('stray file bytes', () => {
  let db: Db;
  let dir: string;
  let store: FileStore;
  let businessId: string;
  let entityId: string;
  const log = pino({ level: 'silent' });

  before(async () => {
    db = connectDb(await isolatedDatabaseUrl(), 4);
    dir = await mkdtemp(path.join(tmpdir(), 'vouch-stray-'));
    store = localDirectoryStore(dir);
    businessId = (await createBusiness(db, { name: 'Stray', binSponsored: false, environment: 'sandbox' })).business.id;
    entityId = await createEntity(db, businessId, { externalId: `stray-${randomUUID()}`, type: 'INDIVIDUAL' });
  });
  after(async () => {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => db.query('DELETE FROM file_store_cleanup'));

  /** Bytes in the store under a new key. */
  const bytesAt = async () => {
    const key = `${businessId}/${entityId}/${randomUUID()}`;
    const file = path.join(dir, `${randomUUID()}.upload`);
    await writeFile(file, 'bytes');
    await store.put(key, { path: file, size: 5 }, 'application/pdf');
    return key;
  };
  const stored = async (key: string) => {
    const opened = await store.open(key);
    opened?.stream.destroy(); // only whether it is there: its descriptor is closed now, not by the garbage collector
    return opened !== null;
  };
  const queued = async () =>
    (await db.query<{ storage_key: string }>('SELECT storage_key FROM file_store_cleanup ORDER BY storage_key')).map((r) => r.storage_key);
  const pass = () => createHousekeepingActivities({ db, files: store, log }).removeStrayFileBytes();

  it('removes due bytes that no row names, and forgets their keys once they are gone', async () => {
    const keys = await Promise.all(Array.from({ length: 30 }, bytesAt));
    await discardBytes(db, keys);
    assert.equal(await pass(), 30);
    for (const key of keys) assert.equal(await stored(key), false, key);
    assert.deepEqual(await queued(), []);
  });

  it('keeps bytes that are not due yet, and bytes a row names', async () => {
    const waiting = await bytesAt();
    await expectBytes(db, [waiting], 3600);
    const named = await bytesAt();
    await db.query(
      `INSERT INTO files (id, business_id, entity_id, slug, content_type, size, sha256, ` +
        `storage_key) VALUES ($1, $2, $3, 'ukyc-id-document', 'application/pdf', 5, 'x', $4)`,
      [randomUUID(), businessId, entityId, named],
    );
    await db.query('INSERT INTO file_store_cleanup (storage_key, not_before) VALUES ($1, now())', [named]);
    assert.equal(await pass(), 0);
    assert.equal(await stored(waiting), true, 'an upload still within its grace');
    assert.equal(await stored(named), true, 'a file a row names');
    assert.deepEqual(await queued(), [waiting], 'the named key is dropped from the queue, the waiting one stays');
  });

  it('a pass that dies after taking its keys loses none: they are due again when its lease runs out, and no upload can claim them meanwhile', async () => {
    const key = await bytesAt();
    await expectBytes(db, [key], 0);
    // the pass took the key, then its worker was killed before the bytes were removed
    assert.deepEqual(await takeDueBytes(db, 10, 300), [key]);
    assert.deepEqual(await queued(), [key], 'the key is still recorded');
    assert.equal(await claimBytes(db, [key]), false, 'an upload finishing now cannot claim bytes that may be half gone');
    assert.equal(await pass(), 0, 'another pass leaves a leased key alone');
    assert.equal(await stored(key), true);
    await db.query("UPDATE file_store_cleanup SET not_before = now() - interval '1 second'"); // the lease runs out
    assert.equal(await pass(), 1);
    assert.equal(await stored(key), false);
    assert.deepEqual(await queued(), []);
  });

  it('an upload claims bytes that housekeeping has not taken', async () => {
    const key = await bytesAt();
    await expectBytes(db, [key], 0);
    assert.equal(await claimBytes(db, [key]), true);
    assert.deepEqual(await queued(), []);
    assert.equal(await pass(), 0);
    assert.equal(await stored(key), true);
  });

  it('bytes the store refuses to remove stay queued, due again in five minutes', async () => {
    const key = await bytesAt();
    await discardBytes(db, [key]);
    const refusing: FileStore = { ...store, delete: () => Promise.reject(new Error('storage unavailable')) };
    assert.equal(await createHousekeepingActivities({ db, files: refusing, log }).removeStrayFileBytes(), 0);
    const [row] = await db.query<{ due_in: number }>('SELECT extract(epoch FROM not_before - now()) AS due_in FROM file_store_cleanup WHERE storage_key = $1', [
      key,
    ]);
    assert.ok(row && Number(row.due_in) > 200 && Number(row.due_in) <= 300, `due again in five minutes (${row?.due_in} s)`);
    assert.equal(await stored(key), true);
  });

  it('a backlog larger than a pass drains over passes', async () => {
    const keys = await Promise.all(Array.from({ length: 250 }, bytesAt));
    await discardBytes(db, keys);
    assert.equal(await pass(), 200);
    assert.equal(await pass(), 50);
    assert.deepEqual(await queued(), []);
    for (const key of keys) assert.equal(await stored(key), false, key);
  });
});
