// A test's view of the service: the real API over HTTP on a random port, the run's PostgreSQL
// database and Temporal dev server (started once by test/run.ts), and, when asked, real workers on
// task queues of the test's own so parallel test files never take each other's tasks.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { listen } from '../../api/server.ts';
import { publicKeyOf, type SigningKey } from '../../domain/webhook-signature.ts';
import { standardWebhookPublicKeyOf } from '../../domain/standard-webhooks.ts';
import { generateKeyRing, keyRingFile, type KeyRings, type RingKind } from '../../runtime/signing-keys.ts';
import { readOrCreateOnce } from '../../runtime/secret-file.ts';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { connectClient } from '../../temporal/connection.ts';
import { connectWorker } from '../../temporal/worker-connection.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { migrate } from '../../store/migrate.ts';
import { createSumsubClient } from '../../provider/sumsub/client.ts';
import { startProviderSim, type ProviderSim } from '../../provider-sim/server.ts';
import type { SimClient } from '../../provider-sim/state.ts';
import { createWorkers, type Workers } from '../../worker.ts';
import { codecKeysFile, readCodecKeys, type CodecKey } from '../../runtime/codec-keys.ts';
import { checkpointPublicKeyOf } from '../../domain/audit-checkpoint.ts';

/**
 * A development key ring of the run: made once, by the first process that asks, into the run's
 * DATA_DIR where the service's own sandbox processes look for it (RSA key generation is slow: made in
 * every test process, the rings cost about 0.2 s of CPU each time).
 */
function runRing(kind: RingKind): SigningKey[] {
  const file = keyRingFile(loadConfig(process.env), kind);
  return JSON.parse(readOrCreateOnce(file, () => JSON.stringify(generateKeyRing(kind, 'sandbox'), null, 2))) as SigningKey[];
}

let ring: SigningKey[] | undefined;
/** The run's webhook signing ring. */
export function testKeyRing(): SigningKey[] {
  return (ring ??= runRing('webhook'));
}

let payloadRing: SigningKey[] | undefined;
let standardRing: SigningKey[] | undefined;
let checkpointRing: SigningKey[] | undefined;
let sealingRing: CodecKey[] | undefined;
/** The run's Standard Webhooks ring (private: the workers sign with it). */
export function testStandardRing(): SigningKey[] {
  return (standardRing ??= runRing('standard-webhook'));
}

/** The API's rings, the run's: the public keys of the webhook rings, the signed-payload ring, the checkpoints' public keys. */
export function testKeyRings(): KeyRings {
  return {
    webhooks: testKeyRing().map(publicKeyOf),
    standardWebhooks: testStandardRing().map(standardWebhookPublicKeyOf),
    signedPayloads: (payloadRing ??= runRing('signed-payload')),
    auditCheckpoints: testCheckpointRing().map(checkpointPublicKeyOf),
    sealing: testSealingRing(),
  };
}

/** The run's payload codec ring (in its DATA_DIR, shared by every process of the run): it seals subscription secrets too. */
export function testSealingRing(): CodecKey[] {
  return (sealingRing ??= readCodecKeys(loadConfig(process.env)));
}

/** The ring that signs the audit chain's checkpoints in a test stack's workers (the API publishes its public halves). */
export function testCheckpointRing(): SigningKey[] {
  return (checkpointRing ??= runRing('audit-checkpoint'));
}

/** The rings a delivery is signed with, as the workers of a test stack use them. */
export function testWebhookKeys() {
  return { signature: testKeyRing(), standard: testStandardRing(), sealing: testSealingRing() };
}

export function testEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with npm test`);
  return value;
}

/**
 * A PostgreSQL schema of its own in the run's database, migrated, as a connection URL (its
 * search_path names the schema). Each stack runs a webhook dispatcher that claims every due delivery
 * in its database, so test files that run at once must not share tables.
 */
export async function isolatedDatabaseUrl(): Promise<string> {
  const base = testEnv('TEST_DATABASE_URL');
  const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const admin = connectDb(base, 1);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.close();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const db = connectDb(url.toString(), 1);
  await migrate(db);
  await db.close();
  return url.toString();
}

export type Reply = { status: number; headers: Headers; body: any; text: string };

export type Stack = {
  url: string;
  config: Config;
  db: Db;
  temporal: Client;
  workers: Workers | undefined;
  /** The identity-provider simulator the workers talk to (started with the workers). */
  sim: ProviderSim | undefined;
  /** Our account at the simulator. */
  recipient: SimClient | undefined;
  /** Every log line written, parsed. */
  logs: Record<string, unknown>[];
  newBusiness(options?: { name?: string; binSponsored?: boolean }): Promise<{ businessId: string; apiKey: string }>;
  request(
    method: string,
    path: string,
    options?: { key?: string; json?: unknown; body?: string | Uint8Array; form?: FormData; headers?: Record<string, string> },
  ): Promise<Reply>;
  close(): Promise<void>;
};

/**
 * `providerCallbacks`: the simulator calls the API's provider-callback endpoint, signed with a
 * secret the API knows, as `npm start` wires it (off by default: token-sharing tests would get a
 * callback per imported applicant).
 */
export async function startStack(
  options: { env?: Record<string, string>; workers?: boolean; poolSize?: number; providerCallbacks?: boolean } = {},
): Promise<Stack> {
  const suffix = randomUUID().slice(0, 8);
  const callbackSecret = options.providerCallbacks ? `callbacks-${randomUUID()}` : undefined;
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: await isolatedDatabaseUrl(),
    TEMPORAL_ADDRESS: testEnv('TEMPORAL_ADDRESS'),
    TASK_QUEUE: `test-${suffix}`,
    PROVIDER_TASK_QUEUE: `test-provider-${suffix}`,
    SYNC_TASK_QUEUE: `test-sync-${suffix}`,
    WEBHOOK_TASK_QUEUE: `test-webhooks-${suffix}`,
    LOG_LEVEL: 'debug',
    // the files that hold 401 on every endpoint send dozens a second from 127.0.0.1; the limit on
    // wrong keys per address is held by test/integration/auth-failure-limit.test.ts
    AUTH_FAILURE_LIMIT_PER_SECOND: '1000000',
    FILE_STORE_DIR: mkdtempSync(path.join(tmpdir(), 'vouch-files-')),
    ...(callbackSecret ? { PROVIDER_WEBHOOK_SECRET: callbackSecret } : {}),
    ...options.env,
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  const log = createLogger(config.logLevel, 'vouch-test', sink);
  const db = connectDb(config.database.url!, options.poolSize ?? 5, { prepare: true }); // as the service runs on PostgreSQL (runtime/database.ts)
  await migrate(db);
  const temporal = await connectClient(config);
  let connection: NativeConnection | undefined;
  let workers: Workers | undefined;
  let sim: ProviderSim | undefined;
  let recipient: SimClient | undefined;
  if (options.workers) {
    sim = await startProviderSim();
    recipient = sim.state.addClient({ clientId: config.provider.clientId });
    const provider = createSumsubClient({
      baseUrl: sim.url,
      appToken: recipient.appToken,
      secretKey: recipient.secretKey,
      webhookSecret: recipient.webhookSecret,
      timeoutMs: config.provider.timeoutMs,
    });
    connection = await connectWorker(config, log);
    workers = await createWorkers(config, connection, {
      db,
      log,
      provider,
      temporal,
      webhookKeys: testWebhookKeys(),
      checkpointKeys: testCheckpointRing(),
    });
    void workers.run();
  }
  const api = await listen({ config, db, temporal, log, keys: testKeyRings() }, 0);
  if (callbackSecret && sim && recipient)
    sim.state.updateClient(recipient.clientId, { webhookUrl: `${api.url}/provider-webhooks/sumsub`, webhookSecret: callbackSecret });

  return {
    url: api.url,
    config,
    db,
    temporal,
    workers,
    sim,
    recipient,
    logs,
    async newBusiness({ name = `Test ${suffix}`, binSponsored = false } = {}) {
      const { business, apiKey } = await createBusiness(db, { name, binSponsored, environment: config.environment });
      return { businessId: business.id, apiKey };
    },
    async request(method, path, { key, json, body, form, headers = {} } = {}) {
      const h: Record<string, string> = { ...headers };
      if (key !== undefined) h['x-vouch-api-key'] = key;
      let payload: string | Uint8Array | FormData | undefined = form ?? body;
      if (json !== undefined) {
        payload = JSON.stringify(json);
        h['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${api.url}${path}`, { method, headers: h, body: payload });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async close() {
      await api.close();
      await workers?.shutdown();
      await connection?.close();
      await sim?.close();
      await temporal.connection.close();
      await db.close();
    },
  };
}

/**
 * A staging environment's settings: what outside the sandbox must be supplied rather than generated
 * (the payload key ring, the file-link secret), fresh random values, over `env`.
 */
export function stagingEnv(env: Record<string, string> = {}): Record<string, string> {
  return {
    VOUCH_ENVIRONMENT: 'staging',
    PAYLOAD_CODEC_KEYS: JSON.stringify([
      { id: `staging-${randomUUID().slice(0, 8)}`, key: randomBytes(32).toString('base64'), createdAt: new Date().toISOString() },
    ]),
    FILE_LINK_SECRET: randomBytes(24).toString('hex'),
    ...env,
  };
}

/**
 * The environment of a worker process working for this stack: its database, queues, file store and
 * payload key ring (every process of a deployment shares them), against a provider account.
 */
export function workerEnvFor(
  stack: Stack,
  provider: { url: string; appToken: string; secretKey: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: stack.config.database.url!,
    TEMPORAL_ADDRESS: testEnv('TEMPORAL_ADDRESS'),
    TASK_QUEUE: stack.config.temporal.taskQueue,
    PROVIDER_TASK_QUEUE: stack.config.temporal.providerTaskQueue,
    SYNC_TASK_QUEUE: stack.config.temporal.syncTaskQueue,
    WEBHOOK_TASK_QUEUE: stack.config.webhooks.taskQueue,
    PROVIDER_BASE_URL: provider.url,
    PROVIDER_APP_TOKEN: provider.appToken,
    PROVIDER_SECRET_KEY: provider.secretKey,
    FILE_STORE_DIR: stack.config.files.dir,
    PAYLOAD_CODEC_KEYS_FILE: codecKeysFile(stack.config),
    LOG_LEVEL: 'warn',
    ...extra,
  };
}
