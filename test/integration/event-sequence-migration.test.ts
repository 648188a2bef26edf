// Migration 034 on a database that has events (issue 38, item 6): events recorded before it are
// numbered per business in the order they were recorded, their bodies (already delivered) left as they
// were, and the next event of each business follows on from there, numbered at commit.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { connectDb, type Db } from '../../store/db.ts';
import { testEnv } from '../helpers/stack.ts';

const dir = new URL('../../store/migrations/', import.meta.url);

describe('migration 034 (event sequence) on a database with events', () => {
  const schema = `vouch_m034_${randomUUID().slice(0, 8)}`;
  let admin: Db;
  let db: Db;
  const apply = async (which: (version: string) => boolean) => {
    for (const f of (await readdir(dir)).filter((f) => /^\d{3}_.*\.sql$/.test(f)).sort())
      if (which(f.slice(0, 3))) await db.tx(async (q) => void (await q.query(await readFile(new URL(f, dir), 'utf8'))));
  };

  before(async () => {
    admin = connectDb(testEnv('TEST_DATABASE_URL'), 1);
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(testEnv('TEST_DATABASE_URL'));
    url.searchParams.set('options', `-c search_path=${schema}`);
    db = connectDb(url.toString(), 2);
  });
  after(async () => {
    await db?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.close();
  });

  it('numbers existing events per business by when they were recorded, keeps their bodies, and goes on from there', async () => {
    await apply((v) => v < '034');
    const [a, b] = [randomUUID(), randomUUID()];
    for (const id of [a, b]) await db.query("INSERT INTO businesses (id, name) VALUES ($1, 'm034')", [id]);
    const old = [
      [a, '2026-11-01T10:00:02Z'],
      [b, '2026-11-01T10:00:01Z'],
      [a, '2026-11-01T10:00:00Z'],
      [a, '2026-11-01T10:00:03Z'],
    ] as const;
    const ids: string[] = [];
    for (const [business, at] of old) {
      const id = randomUUID();
      ids.push(id);
      const body = JSON.stringify({ eventName: 'x', eventType: 'new_feature', businessId: business, data: { at } });
      await db.query(
        `INSERT INTO events (id, business_id, event_name, event_type, payload, body, source_key, created_at)
         VALUES ($1, $2, 'x', 'new_feature', $3::jsonb, $4, $6, $5)`,
        [id, business, body, body, at, id],
      );
    }
    const before = await db.query<{ id: string; body: string }>('SELECT id, body FROM events ORDER BY id');
    await apply((v) => v === '034');
    const after = await db.query<{ id: string; body: string; sequence: string }>('SELECT id, body, sequence FROM events ORDER BY id');
    assert.deepEqual(
      after.map((r) => [r.id, r.body]),
      before.map((r) => [r.id, r.body]),
      'bodies as delivered',
    );
    const seq = new Map(after.map((r) => [r.id, Number(r.sequence)]));
    assert.deepEqual(
      ids.map((id) => seq.get(id)),
      [2, 1, 1, 3],
      "each business's events in the order they were recorded",
    );
    // the next event of business a follows on, numbered at commit, its placeholder replaced
    const next = randomUUID();
    const body = JSON.stringify({ eventName: 'x', eventType: 'new_feature', businessId: a, data: {}, sequence: 0 });
    await db.query(
      `INSERT INTO events (id, business_id, event_name, event_type, payload, body, source_key) VALUES ($1, $2, 'x', 'new_feature', $3::jsonb, $4, $5)`,
      [next, a, body, body, next],
    );
    const [row] = await db.query<{ body: string; sequence: string; payload: { sequence: number } }>(
      'SELECT body, sequence, payload FROM events WHERE id = $1',
      [next],
    );
    assert.deepEqual([Number(row!.sequence), JSON.parse(row!.body).sequence, row!.payload.sequence], [4, 4, 4]);
  });
});
