// What the verification benchmarks share: the stack they run on, percentiles, waiting for a
// condition, bounded concurrency, and a loopback webhook receiver that notes when each entity's
// first event (of the kinds counted) arrived.
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from '../test/helpers/infra.ts';
import { startProviderSim } from '../provider-sim/server.ts';
import { start } from '../test/helpers/processes.ts';
import { isolatedDatabaseUrl, startStack, workerEnvFor, type Stack } from '../test/helpers/stack.ts';
import { freePort } from '../test/helpers/ports.ts';
import { connectDb } from '../store/db.ts';

export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs `fn` over `items` with at most `n` in flight. */
export async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

type Event = { eventType: string; data: { entityId: string } };

/** Answers 200 at once; `first` holds when each entity's first counted event arrived, `deliveries()` how many counted arrived. */
export async function loopbackReceiver(counts: (event: Event) => boolean = () => true) {
  const first = new Map<string, number>();
  let deliveries = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const event = JSON.parse(Buffer.concat(chunks).toString()) as Event;
    if (counts(event)) {
      deliveries++;
      if (!first.has(event.data.entityId)) first.set(event.data.entityId, Date.now());
    }
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}/${path}`,
    first,
    deliveries: () => deliveries,
    close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())),
  };
}

/**
 * A receiver like loopbackReceiver in a child process (bench/receiver-process.ts), counting the
 * deliveries of one event type: the client's system on the same machine, not sharing Vouch's event
 * loop. `deliveries()` lags by at most a tenth of a second.
 */
export async function receiverProcess(eventType: string) {
  const child = fork(fileURLToPath(new URL('./receiver-process.ts', import.meta.url)), [eventType], { stdio: 'inherit' });
  let deliveries = 0;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (m: { port?: number; deliveries?: number }) => {
      if (m.port !== undefined) resolve(m.port);
      if (m.deliveries !== undefined) deliveries = m.deliveries;
    });
  });
  return {
    url: (path: string) => `http://127.0.0.1:${port}/${path}`,
    deliveries: () => deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}

/**
 * The API as deployed, `node api/server.ts`, a process of its own on a PostgreSQL schema of its own
 * (with `env` over its settings), a connection to that schema (one connection: for the bench's own
 * rows), and the address it listens on. The caller stops the process and closes the connection.
 */
export async function apiProcess(temporalAddress: string, env: Record<string, string>) {
  const databaseUrl = await isolatedDatabaseUrl();
  const db = connectDb(databaseUrl, 1);
  const port = await freePort();
  const api = start('api/server.ts', [], { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress, PORT: String(port), ...env });
  return { api, db, base: `http://127.0.0.1:${port}` };
}

/**
 * Runs a benchmark on the real parts: a fresh PostgreSQL database, a Temporal dev server, the API
 * and workers on PostgreSQL (pool 10, API rate limit out of the way), keys in a temporary DATA_DIR;
 * everything is torn down after, also on failure. The workers run in this process, or with
 * `workerProcess` as deployed: `node worker.ts`, a process of its own (with the provider simulator).
 */
export async function onBenchStack(
  options: { database: string; providerCallbacks?: boolean; workerProcess?: boolean },
  bench: (stack: Stack) => Promise<void>,
): Promise<void> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'vouch-bench-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const database = await createDatabase(process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL, options.database);
    cleanups.push(() => database.drop());
    const temporal = await startTemporal();
    cleanups.push(() => temporal.stop());
    Object.assign(process.env, { TEST_DATABASE_URL: database.url, TEMPORAL_ADDRESS: temporal.address, DATA_DIR: dataDir, VOUCH_ENVIRONMENT: 'sandbox' });
    const separate = options.workerProcess ?? false;
    const stack = await startStack({
      workers: !separate,
      providerCallbacks: options.providerCallbacks ?? false,
      poolSize: 10,
      env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: 'warn', API_RATE_LIMIT_PER_SECOND: '10000' },
    });
    cleanups.push(() => stack.close());
    if (separate) {
      // as deployed (docker-compose.yml): the worker is `node worker.ts`, a process of its own beside the API's
      const sim = await startProviderSim();
      cleanups.push(() => sim.close());
      const us = sim.state.addClient({ clientId: 'vouch' });
      const worker = start(
        'worker.ts',
        [],
        workerEnvFor(stack, { url: sim.url, appToken: us.appToken, secretKey: us.secretKey }, { WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: 'info' }),
      );
      cleanups.push(() => worker.stop('SIGTERM'));
      await worker.waitFor(/worker polling/, 60_000);
    }
    await bench(stack);
  } finally {
    for (const c of cleanups.reverse()) await c().catch((err) => process.stdout.write(`clean-up: ${(err as Error).message}\n`));
  }
}
