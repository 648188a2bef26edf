// A PostgreSQL server of a test's own (initdb into a temporary directory, on a free port), so the
// test may stop and restart it without disturbing the rest of the run. Uses the machine's PostgreSQL
// binaries (the ones CI installs); as root, the server runs as the `postgres` user, as PostgreSQL
// requires.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.ts';

export type PrivatePostgres = {
  url: string;
  /** Stops the server (`fast`: clients disconnected, `immediate`: as if it crashed) and starts it again. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  stop(): Promise<void>;
};

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const dir = versions.map((v) => path.join(root, v, 'bin')).find((d) => existsSync(path.join(d, 'initdb')));
  if (!dir) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');
  return dir;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const root = await mkdtemp(path.join(os.tmpdir(), 'vouch-pg-'));
  const data = path.join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(root, uid, gid);
  }
  const run = (tool: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : path.join(bin, tool), asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args, {
      stdio: 'pipe',
      cwd: root,
    });
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(root, 'server.log'), '-w', '-t', '60', 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(mode = 'fast') {
      run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      start();
    },
    async stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}
