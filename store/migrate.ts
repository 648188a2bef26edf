// Applies store/migrations/NNN_name.sql in order, each once, all pending ones in one transaction
// (all or none). An advisory lock lets several processes start at once without racing. A process
// whose role may not change the schema (the service's role, when migrations run as the owner's:
// store/service-role.ts) finds nothing pending and changes nothing; were something pending, it says
// to run `vouch db migrate`.
import { readdir, readFile } from 'node:fs/promises';
import type { Db } from './db.ts';

const dir = new URL('./migrations/', import.meta.url);
const LOCK_ID = 7_261_001;

async function migrationFiles(): Promise<string[]> {
  return (await readdir(dir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
}

/** The migrations not applied yet (all of them on an empty schema). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const files = await migrationFiles();
  const [table] = await db.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!table?.t) return files.map((f) => f.slice(0, -4));
  const done = new Set((await db.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
  return files.map((f) => f.slice(0, -4)).filter((v) => !done.has(v));
}

export class MigrationsPending extends Error {}

export async function migrate(db: Db): Promise<string[]> {
  if ((await pendingMigrations(db)).length === 0) return [];
  const files = await migrationFiles();
  try {
    return await db.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
      await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
      const applied: string[] = [];
      for (const file of files) {
        const version = file.slice(0, -4);
        if (done.has(version)) continue;
        await tx.query(await readFile(new URL(file, dir), 'utf8'));
        await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
        applied.push(version);
      }
      return applied;
    });
  } catch (err) {
    if ((err as { code?: string }).code !== '42501') throw err; // insufficient_privilege: not the schema's owner
    const pending = await pendingMigrations(db);
    if (pending.length === 0) return []; // the owner migrated while this process waited for the lock
    throw new MigrationsPending(
      `${pending.length} database migration(s) are pending (${pending.join(', ')}) and this role may not apply them: ` +
        'run `vouch db migrate` with DATABASE_MIGRATION_URL (the schema owner), then start again',
    );
  }
}
