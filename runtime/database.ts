// Opens the system of record: PostgreSQL at DATABASE_URL, else the embedded PGlite under DATA_DIR
// (reusing the one `npm start` is already serving, so the admin CLI works beside it).
import type { Logger } from 'pino';
import { startLinkSweep } from '../store/audit-chainer.ts';
import { connectDb, type Db } from '../store/db.ts';
import { runningEmbeddedPostgres, startEmbeddedPostgres, type EmbeddedPostgres } from '../store/embedded-postgres.ts';
import { migrate } from '../store/migrate.ts';
import { grantServiceRole } from '../store/service-role.ts';
import type { Config } from './config.ts';

export type OpenDatabase = { db: Db; url: string; embedded: EmbeddedPostgres | undefined; close(): Promise<void> };

export type OpenOptions = {
  serveEmbedded?: boolean;
  /** A service process (API, worker): sweeps for audit entries left unlinked (store/audit-chainer.ts), its failures logged here. */
  auditSweep?: Logger;
};

export async function openDatabase(config: Config, options: OpenOptions = {}): Promise<OpenDatabase> {
  let url = config.database.url;
  let embedded: EmbeddedPostgres | undefined;
  if (!url) {
    url = await runningEmbeddedPostgres(config.dataDir);
    if (!url) {
      // Serve on the configured port when this process is the service; on any free port for a one-off tool.
      embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: options.serveEmbedded ? config.database.pglitePort : 0 });
      url = embedded.url;
    }
  }
  // PGlite is one database session: its socket server multiplexes connections, but interleaved
  // extended-protocol messages of concurrent connections can mismatch (seen as 08P01 errors and
  // wrong rows under load). One connection per process keeps every statement whole.
  const db = config.database.url ? connectDb(url, config.database.poolSize, { prepare: true }) : connectDb(url, 1);
  // with the schema owner's connection, migrations run as it and grant the service's role its part;
  // else the service's own role migrates (one role: the embedded database, development)
  if (config.database.migrationUrl) await migrateAsOwner(config);
  await migrate(db);
  const log = options.auditSweep;
  const stopSweep = log ? startLinkSweep(db, (err) => log.warn({ err }, 'audit entries not linked yet; the next sweep retries')) : async () => {};
  return {
    db,
    url,
    embedded,
    async close() {
      await stopSweep();
      await db.close();
      await embedded?.stop();
    },
  };
}

/**
 * Applies the pending migrations as the schema's owner (DATABASE_MIGRATION_URL) and grants the
 * service's role (DATABASE_SERVICE_ROLE, else DATABASE_URL's user) its privileges
 * (store/service-role.ts): `vouch db migrate`, the deployment's migration job.
 */
export async function migrateAsOwner(config: Config): Promise<{ applied: string[]; granted: string | null }> {
  const owner = connectDb(config.database.migrationUrl ?? config.database.url!, 1);
  try {
    const applied = await migrate(owner);
    const role = config.database.serviceRole ?? null;
    if (role) await owner.tx((tx) => grantServiceRole(tx, role));
    return { applied, granted: role };
  } finally {
    await owner.close();
  }
}
