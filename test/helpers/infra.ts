// The run-wide infrastructure of `npm test` and of the benchmarks: a fresh PostgreSQL database and a
// Temporal dev server, both thrown away afterwards.
import pg from 'pg';
import { startTemporalDevServer, type TemporalDevServer } from '../../runtime/temporal-dev-server.ts';
import { connectDb } from '../../store/db.ts';
import { migrate } from '../../store/migrate.ts';
import { freePort } from './ports.ts';

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export async function createDatabase(adminUrl: string, prefix = 'vouch_test'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`cannot reach PostgreSQL at ${adminUrl} (${(err as Error).message}); start it or set TEST_POSTGRES_URL`);
  }
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = connectDb(url.toString(), 2);
  await migrate(db);
  await db.close();
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function startTemporal(dynamicConfig?: Record<string, string | number | boolean>): Promise<TemporalDevServer> {
  return startTemporalDevServer({ port: await freePort(), headless: true, ...(dynamicConfig ? { dynamicConfig } : {}) });
}
