// The embedded default database: PGlite (PostgreSQL compiled to WebAssembly) with its data under
// DATA_DIR, served on a loopback port over the PostgreSQL wire protocol so that the service, the
// admin CLI and psql all use the same driver and SQL as against a real PostgreSQL.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export type EmbeddedPostgres = { url: string; stop(): Promise<void> };

const stateFile = (dataDir: string) => path.join(dataDir, 'pglite.json');

/** Starts PGlite on `dataDir/pglite` (or in memory when dataDir is null) and serves it on host:port. */
export async function startEmbeddedPostgres(options: {
  dataDir: string | null;
  port: number;
  host?: string;
  maxConnections?: number;
}): Promise<EmbeddedPostgres> {
  const host = options.host ?? '127.0.0.1';
  let dbDir: string | undefined;
  if (options.dataDir) {
    dbDir = path.join(options.dataDir, 'pglite');
    await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  }
  const db = await PGlite.create(dbDir);
  const server = new PGLiteSocketServer({ db, host, port: options.port, maxConnections: options.maxConnections ?? 20 });
  await server.start();
  const address = server.getServerConn();
  const port = Number(address.split(':').pop());
  const url = `postgres://postgres@${host}:${port}/postgres?sslmode=disable`;
  if (options.dataDir) await writeFile(stateFile(options.dataDir), JSON.stringify({ pid: process.pid, url }));
  return {
    url,
    async stop() {
      await server.stop();
      await db.close();
      if (options.dataDir) await rm(stateFile(options.dataDir), { force: true });
    },
  };
}

/** The URL of an embedded database another process (npm start) is serving from dataDir, if any. */
export async function runningEmbeddedPostgres(dataDir: string): Promise<string | undefined> {
  let state: { pid: number; url: string };
  try {
    state = JSON.parse(await readFile(stateFile(dataDir), 'utf8'));
  } catch {
    return undefined;
  }
  if (!isAlive(state.pid)) return undefined;
  const { hostname, port } = new URL(state.url);
  return (await canConnect(hostname, Number(port))) ? state.url : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}
