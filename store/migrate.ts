// Applies store/migrations/NNN_name.sql in order, each once, all pending ones in one transaction
// (all or none). An advisory lock lets several processes start at once without racing.
import { readdir, readFile } from 'node:fs/promises';
import type { Db } from './db.ts';

const dir = new URL('./migrations/', import.meta.url);
const LOCK_ID = 7_261_001;

export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  return db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await q.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await q.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const file of files) {
      const version = file.slice(0, -4);
      if (done.has(version)) continue;
      await q.query(await readFile(new URL(file, dir), 'utf8'));
      await q.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
      applied.push(version);
    }
    return applied;
  });
}
