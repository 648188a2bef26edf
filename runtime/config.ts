// Every setting the service reads from its environment, in one place, validated once at start.
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_KYB_DEADLINE_SECONDS } from '../domain/kyb.ts';
import { DEFAULT_UKYC_DEADLINE_SECONDS } from '../domain/universal-kyc.ts';
import { DISABLE_AFTER_MS } from '../domain/webhooks.ts';
import { parseAddressRanges } from '../domain/client-address.ts';
import { WORKER_ROLE_NAMES, workerRoles } from './worker-roles.ts';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

/**
 * How docs/operations.md shows a setting's default: by default the schema's own default value (`3000`) or
 * "unset"; `default` says it in words instead, `note` adds words after the value.
 */
export type DefaultText = { default?: string; note?: string };
export type Setting = DefaultText & {
  schema: z.ZodType;
  /** Its row's "meaning" in docs/operations.md's table; undefined: it shares the row of the setting before it. */
  meaning: string | undefined;
};

/** A setting that opens a row of docs/operations.md's configuration table. */
const setting = <S extends z.ZodType>(schema: S, meaning: string, shown: DefaultText = {}) => ({ schema, meaning, ...shown });
/** A setting documented in the row of the one before it (settings read together, e.g. `PORT`, `HOST`). */
const sameRow = <S extends z.ZodType>(schema: S, shown: DefaultText = {}) => ({ schema, meaning: undefined, ...shown });

const GENERATED = 'generated in the sandbox';
const FROM_SIMULATOR = 'from the simulator in `npm start`';
const CODEC_KEYS_GENERATED = 'generated into `DATA_DIR/payload-codec-keys.json` in the sandbox';
const CLOSED_OUTSIDE_SANDBOX = 'outside the sandbox (≥ 32 characters; unset there: closed)';

/**
 * Every setting the service reads from its environment, each declared once: its variable, how it
 * is parsed and defaulted, and its row of docs/operations.md's table (scripts/print-config-table.ts prints
 * the table; loadConfig below shapes the parsed values into the Config the code uses).
 */
export const SETTINGS = {
  PORT: setting(port.default(3000), 'API listen address'),
  HOST: sameRow(z.string().default('127.0.0.1')),
  VOUCH_ENVIRONMENT: setting(
    z.enum(['sandbox', 'staging', 'production']).default('sandbox'),
    '`sandbox`, `staging` or `production`; API keys carry it (`vk_sandbox_…`). ' +
      'Outside the sandbox `/codec` and `/metrics` need their tokens and `/sandbox/*` does not exist',
    { default: 'required; `npm start` alone: `sandbox`' },
  ),
  DATABASE_URL: setting(z.string().url().optional(), 'PostgreSQL connection string', { default: 'unset → embedded PGlite' }),
  DATABASE_POOL_SIZE: setting(positiveInt.default(10), 'connections per process'),
  DATABASE_MIGRATION_URL: setting(
    z.string().url().optional(),
    "PostgreSQL connection of the schema's owner: migrations run as it (`vouch db migrate`), the service as `DATABASE_URL`'s role",
    { default: 'unset → `DATABASE_URL` migrates too (one role)' },
  ),
  DATABASE_SERVICE_ROLE: setting(
    z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a PostgreSQL role name')
      .optional(),
    'the role the service runs as, granted its privileges by each migration',
    {
      default: "`DATABASE_URL`'s user",
    },
  ),
  DATA_DIR: setting(
    z.string().default('.data'),
    'embedded database, Temporal dev state, sandbox keys, uploaded files; made mode 700 at start (every process runs with umask 077)',
  ),
  PGLITE_PORT: setting(port.default(5433), 'where `npm start` serves the embedded database'),
  TEMPORAL_ADDRESS: setting(z.string().default('127.0.0.1:7233'), 'Temporal frontend, e.g. `temporal:7233` or Temporal Cloud', {
    default: 'unset → `npm start` runs its own dev server',
  }),
  TEMPORAL_NAMESPACE: setting(z.string().default('default'), 'Temporal namespace'),
  TEMPORAL_API_KEY: setting(z.string().optional(), 'Temporal Cloud credentials; TLS is on when an API key is set'),
  TEMPORAL_TLS: sameRow(bool.default(false)),
  TEMPORAL_TLS_CLIENT_CERT_PATH: setting(z.string().optional(), 'mTLS: PEM files of our client certificate and its key (both or neither; TLS is on when set)'),
  TEMPORAL_TLS_CLIENT_KEY_PATH: sameRow(z.string().optional()),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: setting(z.string().optional(), "PEM file of the CA that signed the cluster's certificate (a private CA)"),
  TEMPORAL_TLS_SERVER_NAME: setting(z.string().optional(), "the name the cluster's certificate carries, when it is not the host of `TEMPORAL_ADDRESS`"),
  TEMPORAL_DEV_PORT: setting(port.default(7233), 'ports of the dev server `npm start` runs'),
  TEMPORAL_UI_PORT: sameRow(port.default(8233)),
  TEMPORAL_UI_URL: setting(z.string().url().optional(), 'the Temporal Web UI, for the run links `vouch trace` prints', {
    default: 'unset → the dev server’s, `http://127.0.0.1:8233` (`TEMPORAL_UI_PORT`)',
  }),
  TEMPORAL_CLI: setting(z.string().optional(), 'path of the `temporal` binary', { default: 'found on `PATH` or in `.tools/venv`' }),
  TASK_QUEUE: setting(z.string().min(1).default('vouch'), 'general task queue (workflows and non-provider activities)'),
  PROVIDER_TASK_QUEUE: setting(
    z.string().min(1).default('vouch-provider'),
    'task queue of every activity that calls the identity provider, batch rows and sync imports alike',
  ),
  PROVIDER_RATE_LIMIT_PER_SECOND: setting(
    z.coerce.number().positive().default(10),
    'provider calls per second, fleet-wide: spaced by slots and held by a window of sends in PostgreSQL (a whole number of calls: ' +
      "a fraction rounds down), and the provider queue's `maxTaskQueueActivitiesPerSecond` on the Temporal server",
  ),
  SYNC_TASK_QUEUE: setting(z.string().min(1).default('vouch-sync'), 'sync-import workflows and their database steps, on workers of their own'),
  TEMPORAL_WORKER_BUILD_ID: setting(
    z.string().min(1).max(255).optional(),
    'this release\'s build id: set, the workers join the Worker Deployment `TEMPORAL_WORKER_DEPLOYMENT` as that version (see "Releasing workflow code")',
    { default: 'unset → unversioned workers' },
  ),
  TEMPORAL_WORKER_DEPLOYMENT: sameRow(z.string().min(1).max(255).default('vouch')),
  WORKER_ROLES: setting(
    workerRoles.default([...WORKER_ROLE_NAMES]),
    'the task queues a worker process polls, comma-separated: `general`, `sync`, `provider`, `webhooks` (see "Running a fleet")',
    { default: 'all four' },
  ),
  WORKER_MAX_CACHED_WORKFLOWS: setting(
    positiveInt.optional(),
    "workflows each worker of a process keeps in Temporal's sticky cache, ready to continue without a replay; " +
      "about 0.4 MB each (bench/workflow-cache.ts): size the process's memory by it",
    { default: "unset → the SDK's, from the heap limit (about 600 per GB of heap)" },
  ),
  BATCH_CONCURRENCY: setting(positiveInt.default(50), 'records in flight per batch; rows per workflow run before continue-as-new'),
  BATCH_PAGE_SIZE: sameRow(positiveInt.max(1000).default(500)),
  BATCH_PROVIDER_MAX_ATTEMPTS: setting(positiveInt.default(8), 'retries of one provider call in a batch'),
  BATCH_PROVIDER_RETRY_INITIAL_MS: sameRow(positiveInt.default(2000)),
  SYNC_IMPORT_RATE_LIMIT_PER_SECOND: setting(positiveInt.default(3), 'sync imports per second per business'),
  PROVIDER_BASE_URL: setting(z.string().url().optional(), 'provider API address', { default: 'unset → `npm start` runs the simulator' }),
  PROVIDER_APP_TOKEN: setting(z.string().optional(), 'our app token and its secret', { default: FROM_SIMULATOR }),
  PROVIDER_SECRET_KEY: sameRow(z.string().optional(), { default: FROM_SIMULATOR }),
  PROVIDER_WEBHOOK_SECRET: setting(z.string().optional(), "secret of the provider's webhooks to us", { default: 'from the simulator' }),
  PROVIDER_CLIENT_ID: setting(z.string().min(1).default('vouch'), 'our client id at the provider; donors use it as `forClientId`'),
  PROVIDER_DEFAULT_LEVEL: setting(z.string().min(1).default('basic-kyc-level'), 'level used when an import names none'),
  PROVIDER_TIMEOUT_MS: setting(positiveInt.default(10_000), 'per-request timeout'),
  PROVIDER_LEGACY_IMPORT: setting(bool.default(false), 'use `POST /resources/applicants/-/import` instead of `reusableIdentity/reuse`'),
  PROVIDER_SIM_PORT: setting(port.default(8090), 'where `npm start` / `npm run provider-sim` serve the simulator'),
  PROVIDER_SIM_HOST: sameRow(z.string().default('127.0.0.1')),
  PROVIDER_SIM_CALLBACK_URL: setting(
    z.string().url().optional(),
    "where `npm run provider-sim` sends our account's applicant webhooks (compose's sandbox: the API's `/provider-webhooks/sumsub`)",
    { default: 'none' },
  ),
  WEBHOOK_TASK_QUEUE: setting(z.string().min(1).default('vouch-webhooks'), 'the webhook dispatchers (every attempt: first attempts, retries, redeliveries)'),
  WEBHOOK_DISPATCHERS: setting(
    positiveInt.max(64).default(2),
    'dispatcher activities running at once across the fleet (each claims and sends deliveries concurrently)',
  ),
  WEBHOOK_MAX_IN_FLIGHT: setting(
    positiveInt.default(256),
    'requests in flight per dispatcher, and to one subscription and for one business within it (see "Fair shares")',
  ),
  WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: sameRow(positiveInt.default(16)),
  WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS: sameRow(positiveInt.default(64)),
  WEBHOOK_REDELIVERIES_PER_SECOND: setting(
    positiveInt.default(10),
    'redelivery requests (`POST /events/{id}/redeliver`, `POST /notification/{id}/redeliver`) per second per business',
  ),
  WEBHOOK_POLL_MS: setting(positiveInt.default(100), "pause between a dispatcher's claims when nothing is due"),
  WEBHOOK_DISABLE_AFTER_MS: setting(
    positiveInt.default(DISABLE_AFTER_MS),
    'a subscription whose every attempt has failed for this long is disabled, its pending deliveries kept (see "Endpoints that fail for days")',
    { note: '5 days' },
  ),
  WEBHOOK_SIGNING_KEYS: setting(z.string().optional(), 'the signing key ring of `vouch-signature` (see Webhooks)', { default: GENERATED }),
  WEBHOOK_SIGNING_KEYS_FILE: sameRow(z.string().optional(), { default: GENERATED }),
  STANDARD_WEBHOOK_KEYS: setting(z.string().optional(), 'the Ed25519 key ring of `webhook-signature` (Standard Webhooks; see Webhooks)', {
    default: GENERATED,
  }),
  STANDARD_WEBHOOK_KEYS_FILE: sameRow(z.string().optional(), { default: GENERATED }),
  WEBHOOK_SIGNING_PUBLIC_KEYS: setting(
    z.string().optional(),
    'the public keys of `WEBHOOK_SIGNING_KEYS`, which the API publishes (`vouch webhook-keys generate` prints them): the API needs no private key of the ring',
    { default: 'the public halves of `WEBHOOK_SIGNING_KEYS` where the process can read it' },
  ),
  WEBHOOK_SIGNING_PUBLIC_KEYS_FILE: sameRow(z.string().optional(), { default: 'as above' }),
  STANDARD_WEBHOOK_PUBLIC_KEYS: setting(
    z.string().optional(),
    'the public keys of `STANDARD_WEBHOOK_KEYS`, which the API publishes (`vouch standard-webhook-keys generate` prints them)',
    { default: 'the public halves of `STANDARD_WEBHOOK_KEYS` where the process can read it' },
  ),
  STANDARD_WEBHOOK_PUBLIC_KEYS_FILE: sameRow(z.string().optional(), { default: 'as above' }),
  WEBHOOK_ALLOW_INSECURE_URLS: setting(bool.default(false), 'development only: allow `http://` and non-public webhook addresses'),
  SIGNED_PAYLOAD_KEYS: setting(z.string().optional(), 'the Ed25519 signed-payload key ring (see Signed payloads)', { default: GENERATED }),
  SIGNED_PAYLOAD_KEYS_FILE: sameRow(z.string().optional(), { default: GENERATED }),
  SIGNED_PAYLOAD_TTL_SECONDS: setting(
    positiveInt.default(86_400),
    "how long a signed payload is valid after it is read (never past the identity document's expiry)",
  ),
  EVIDENCE_SIGNING_KEYS: setting(
    z.string().optional(),
    'the Ed25519 key ring that signs evidence bundles (`vouch evidence export`; see "For operators: evidence and holds")',
    { default: GENERATED },
  ),
  EVIDENCE_SIGNING_KEYS_FILE: sameRow(z.string().optional(), { default: GENERATED }),
  AUDIT_CHECKPOINT_KEYS: setting(
    z.string().optional(),
    'the Ed25519 key ring that signs the audit chain\'s checkpoints (workers, `vouch audit checkpoint`; see "That the log is whole")',
    { default: GENERATED },
  ),
  AUDIT_CHECKPOINT_KEYS_FILE: sameRow(z.string().optional(), { default: GENERATED }),
  AUDIT_CHECKPOINT_PUBLIC_KEYS: setting(
    z.string().optional(),
    "the checkpoint ring's public keys, which the API publishes and `vouch audit verify` checks with (`vouch audit-checkpoint-keys generate` prints them)",
    { default: 'the public halves of `AUDIT_CHECKPOINT_KEYS` where the process can read it' },
  ),
  AUDIT_CHECKPOINT_PUBLIC_KEYS_FILE: sameRow(z.string().optional(), { default: 'as above' }),
  AUDIT_CHECKPOINT_EVERY_MINUTES: setting(positiveInt.max(24 * 60).default(60), "how often every business's audit chain head is signed and stored"),
  UKYC_SUBMISSION_DEADLINE_SECONDS: setting(
    positiveInt.default(DEFAULT_UKYC_DEADLINE_SECONDS),
    'how long a universal KYC submission waits for its identity document',
    { note: '7 days' },
  ),
  FILE_STORE: setting(z.enum(['local', 's3']).default('local'), '`local` (a directory) or `s3` (S3-compatible object storage); see "Downloads"'),
  FILE_STORE_DIR: setting(z.string().optional(), "the local file store's directory (a shared volume in split mode)", { default: '`DATA_DIR/files`' }),
  FILE_LINK_SECRET: setting(
    z.string().min(32, 'at least 32 characters').optional(),
    'signs download links, whatever the store (≥ 32 characters; required outside the sandbox)',
    { default: 'generated into `DATA_DIR/file-link-secret` in the sandbox' },
  ),
  PUBLIC_BASE_URL: setting(z.string().url().optional(), 'where clients reach the API (makes download links absolute)', {
    default: "the request's own host",
  }),
  PRESIGNED_URL_TTL_SECONDS: setting(positiveInt.max(7 * 86_400).default(900), 'how long a download URL works (at most 7 days)'),
  DOWNLOAD_LINK_MAX_USES: setting(
    positiveInt.max(1000).default(3),
    'how many downloads one download URL serves (each in the audit log); then 403 — ask for a new URL. Its first refusal is recorded, later ones are not',
  ),
  DOWNLOAD_DEADLINE_SECONDS: setting(
    positiveInt.default(120),
    'a download not sent within this time is cut off (a reader that trickles; a download under way when its entity is deleted)',
  ),
  S3_BUCKET: setting(z.string().min(3).optional(), "object storage (`FILE_STORE=s3`); credentials from the AWS SDK's chain"),
  S3_REGION: sameRow(z.string().min(1).default('us-east-1')),
  S3_ENDPOINT: sameRow(z.string().url().optional(), { default: 'AWS' }),
  S3_FORCE_PATH_STYLE: sameRow(bool.optional(), { default: 'on with an endpoint' }),
  S3_KEY_PREFIX: sameRow(z.string().default(''), { default: 'empty' }),
  S3_OBJECT_LOCK_DAYS: sameRow(z.coerce.number().int().min(0).max(36_500).default(0), {
    default: '0: audit checkpoints stored with no lock (a bucket with Object Lock: COMPLIANCE for this many days)',
  }),
  PAYLOAD_CODEC_KEYS: setting(z.string().optional(), 'the key ring that encrypts every Temporal payload (see "Operating Vouch")', {
    default: CODEC_KEYS_GENERATED,
  }),
  PAYLOAD_CODEC_KEYS_FILE: sameRow(z.string().optional(), { default: CODEC_KEYS_GENERATED }),
  PAYLOAD_CODEC_ACCEPT_PLAINTEXT: setting(
    bool.default(false),
    'run payloads that are not encrypted: only for an installation with runs from before payload encryption, until they are done ' +
      '(unset, such a payload — an input or signal written past Vouch — is refused)',
  ),
  CODEC_ACCESS_TOKEN: setting(z.string().min(32, 'at least 32 characters').optional(), `bearer token of \`/codec/*\` ${CLOSED_OUTSIDE_SANDBOX}`),
  CODEC_CORS_ORIGINS: setting(z.string().optional(), 'browser origins allowed to call `/codec/*` (comma-separated)', {
    default: "the dev Web UI's origins",
  }),
  METRICS_TOKEN: setting(z.string().min(32, 'at least 32 characters').optional(), `bearer token of \`/metrics\` ${CLOSED_OUTSIDE_SANDBOX}`),
  WORKER_METRICS_HOST: setting(z.string().default('127.0.0.1'), "the worker process's own `/metrics` (split mode; `0` turns it off)"),
  WORKER_METRICS_PORT: sameRow(port.default(9464)),
  TEMPORAL_CORE_METRICS_PORT: setting(port.default(0), 'where the Temporal SDK core exports its metrics for `/metrics` to read', {
    note: 'a free loopback port',
  }),
  KYB_SUBMISSION_DEADLINE_SECONDS: setting(positiveInt.default(DEFAULT_KYB_DEADLINE_SECONDS), "how long a KYB submission waits for its owners' KYC decisions", {
    note: '30 days',
  }),
  UPLOAD_MAX_FILE_BYTES: setting(positiveInt.default(10 * 1024 * 1024), 'per file, and files per upload request'),
  UPLOAD_MAX_FILES: sameRow(positiveInt.max(50).default(10)),
  UPLOADS_PER_PROCESS: setting(
    positiveInt.default(16),
    'uploads one API process receives at once, in all and for one business (see "Bounded work per request")',
  ),
  UPLOADS_PER_BUSINESS: sameRow(positiveInt.default(4)),
  UPLOAD_SLOT_WAIT_MS: setting(
    z.coerce.number().int().min(0).default(10_000),
    "how long an upload beyond those waits, its body unread, before 429 (the business's limit) or 503 (the process's)",
  ),
  UPLOAD_IDLE_TIMEOUT_MS: setting(positiveInt.default(30_000), 'an upload that sends no byte for this long is cut off (408)'),
  UPLOAD_TMP_DIR: setting(
    z.string().optional(),
    "where uploads are received (on disk, mode 600) before they move into the file store; best on the file store's volume",
    { default: '`DATA_DIR/uploads`' },
  ),
  WORKFLOW_BUNDLE_PATH: setting(z.string().default('dist/workflow-bundle.js'), 'prebuilt workflow bundle (used when the file exists)'),
  API_RATE_LIMIT_PER_SECOND: setting(positiveInt.default(100), 'requests per second per business, across all API processes'),
  AUTH_FAILURE_LIMIT_PER_SECOND: setting(
    positiveInt.default(10),
    'answers 401 (a wrong or missing API key or token) a client address may earn a second, as many in a burst, per API process; ' +
      'beyond, its requests are answered 429 with Retry-After before any key is looked up',
  ),
  TRUSTED_PROXIES: setting(
    z
      .string()
      .default('')
      .refine((v) => {
        try {
          parseAddressRanges(v);
          return true;
        } catch {
          return false;
        }
      }, 'a comma-separated list of addresses and CIDR ranges')
      .transform(parseAddressRanges),
    'the load balancers and ingresses in front of the API (addresses, CIDR ranges): behind them, ' +
      'the client address is the nearest untrusted one in `X-Forwarded-For`',
    { default: 'none: the peer address' },
  ),
  JSON_BODY_LIMIT_BYTES: setting(positiveInt.default(1024 * 1024), 'largest JSON request body'),
  LOG_LEVEL: setting(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'), 'pino level (`silent` … `trace`)'),
  SHUTDOWN_GRACE_MS: setting(positiveInt.default(10_000), 'how long a graceful stop may take before the process exits anyway'),
} satisfies Record<string, Setting>;

const envSchema = z.object(
  Object.fromEntries(Object.entries(SETTINGS).map(([name, s]) => [name, s.schema])) as { [N in keyof typeof SETTINGS]: (typeof SETTINGS)[N]['schema'] },
);

/** Every setting's name (the environment variables this service reads). */
export const SETTING_NAMES: readonly string[] = Object.keys(envSchema.shape);

/** The settings as the code uses them: what loadConfig returns, so each is declared once, in SETTINGS. */
export type Config = ReturnType<typeof loadConfig>;

export class ConfigError extends Error {}

/**
 * The configuration of a process an operator starts (the API, a worker, the CLIs): as loadConfig, and
 * VOUCH_ENVIRONMENT must be named. A bare `node api/server.ts` would otherwise be a sandbox, with
 * `/codec` (a decryption oracle for every Temporal payload), `/metrics` and `/sandbox/*` open to
 * anyone who reaches it. `npm start` alone names the sandbox itself (dev/start.ts); loadConfig keeps
 * its sandbox default for the code that builds a configuration from parts (tests, scripts).
 */
export function loadProcessConfig(env: NodeJS.ProcessEnv = process.env) {
  if (!env.VOUCH_ENVIRONMENT)
    throw new ConfigError(
      "invalid configuration:\n  VOUCH_ENVIRONMENT: required — name this process's environment: sandbox, staging or production " +
        '(only `npm start` runs the sandbox without it)',
    );
  return loadConfig(env);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = envSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (Boolean(e.TEMPORAL_TLS_CLIENT_CERT_PATH) !== Boolean(e.TEMPORAL_TLS_CLIENT_KEY_PATH)) {
    throw new ConfigError(
      'invalid configuration:\n  TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH go together: set both for mTLS, or neither',
    );
  }
  if (e.FILE_STORE === 's3' && !e.S3_BUCKET) {
    throw new ConfigError('invalid configuration:\n  S3_BUCKET: required when FILE_STORE=s3');
  }
  const dataDir = path.resolve(e.DATA_DIR);
  return {
    environment: e.VOUCH_ENVIRONMENT,
    http: {
      host: e.HOST,
      port: e.PORT,
      jsonBodyLimitBytes: e.JSON_BODY_LIMIT_BYTES,
      rateLimitPerSecond: e.API_RATE_LIMIT_PER_SECOND,
      /** 401s a client address may earn a second before its requests are refused unread (api/middleware/auth-failure-limit.ts). */
      authFailuresPerSecond: e.AUTH_FAILURE_LIMIT_PER_SECOND,
      /** TRUSTED_PROXIES, parsed. */
      trustedProxies: e.TRUSTED_PROXIES,
      syncImportRateLimitPerSecond: e.SYNC_IMPORT_RATE_LIMIT_PER_SECOND,
    },
    logLevel: e.LOG_LEVEL,
    dataDir,
    database: {
      url: e.DATABASE_URL,
      poolSize: e.DATABASE_POOL_SIZE,
      pglitePort: e.PGLITE_PORT,
      /** The schema owner's connection (migrations); unset: DATABASE_URL migrates, one role for all. */
      migrationUrl: e.DATABASE_MIGRATION_URL,
      /** The role the service runs as (granted its privileges after migrations); default: DATABASE_URL's user when it differs from the owner's. */
      serviceRole: e.DATABASE_SERVICE_ROLE ?? serviceRoleOf(e.DATABASE_URL, e.DATABASE_MIGRATION_URL),
    },
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      apiKey: e.TEMPORAL_API_KEY,
      tls: e.TEMPORAL_TLS || Boolean(e.TEMPORAL_TLS_CLIENT_CERT_PATH || e.TEMPORAL_TLS_SERVER_CA_CERT_PATH || e.TEMPORAL_TLS_SERVER_NAME),
      /** mTLS: PEM files of our client certificate and its key (both or neither). */
      tlsClientCertPath: e.TEMPORAL_TLS_CLIENT_CERT_PATH && path.resolve(e.TEMPORAL_TLS_CLIENT_CERT_PATH),
      tlsClientKeyPath: e.TEMPORAL_TLS_CLIENT_KEY_PATH && path.resolve(e.TEMPORAL_TLS_CLIENT_KEY_PATH),
      /** PEM file of the CA that signed the server's certificate (a private CA). */
      tlsServerCaCertPath: e.TEMPORAL_TLS_SERVER_CA_CERT_PATH && path.resolve(e.TEMPORAL_TLS_SERVER_CA_CERT_PATH),
      /** The name the server's certificate is checked against, when it is not the address's host. */
      tlsServerName: e.TEMPORAL_TLS_SERVER_NAME,
      uiPort: e.TEMPORAL_UI_PORT,
      /** Where operators open the Web UI (the run links of `vouch trace`); the dev server's by default. */
      uiUrl: (e.TEMPORAL_UI_URL ?? `http://127.0.0.1:${e.TEMPORAL_UI_PORT}`).replace(/\/+$/, ''),
      /** Set when TEMPORAL_ADDRESS was given: `npm start` then uses that server instead of its own. */
      addressGiven: Boolean(env.TEMPORAL_ADDRESS),
      devPort: e.TEMPORAL_DEV_PORT,
      cli: e.TEMPORAL_CLI,
      taskQueue: e.TASK_QUEUE,
      providerTaskQueue: e.PROVIDER_TASK_QUEUE,
      /** Sync imports: workflows and all their activities, on workers of their own. */
      syncTaskQueue: e.SYNC_TASK_QUEUE,
      /** Worker Versioning: this release's version of the Worker Deployment; unset, the workers are unversioned. */
      workerVersion: e.TEMPORAL_WORKER_BUILD_ID ? { deploymentName: e.TEMPORAL_WORKER_DEPLOYMENT, buildId: e.TEMPORAL_WORKER_BUILD_ID } : undefined,
      /** The task queues this worker process polls (WORKER_ROLES). */
      workerRoles: e.WORKER_ROLES,
      /** Each worker's sticky cache (WORKER_MAX_CACHED_WORKFLOWS); undefined: the SDK's default. */
      maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
      batchConcurrency: e.BATCH_CONCURRENCY,
      batchPageSize: e.BATCH_PAGE_SIZE,
      /** Attempts of one provider call in a batch before the row fails as PROVIDER_UNAVAILABLE (retryable). */
      batchProviderMaxAttempts: e.BATCH_PROVIDER_MAX_ATTEMPTS,
      batchProviderRetryInitialMs: e.BATCH_PROVIDER_RETRY_INITIAL_MS,
      providerRateLimitPerSecond: e.PROVIDER_RATE_LIMIT_PER_SECOND,
      workflowBundlePath: path.resolve(e.WORKFLOW_BUNDLE_PATH),
    },
    provider: {
      /** Unset: `npm start` runs the bundled simulator and fills in its development credentials. */
      baseUrl: e.PROVIDER_BASE_URL,
      appToken: e.PROVIDER_APP_TOKEN,
      secretKey: e.PROVIDER_SECRET_KEY,
      webhookSecret: e.PROVIDER_WEBHOOK_SECRET,
      /** Our client id at the provider: donors name it as `forClientId` when minting share tokens. */
      clientId: e.PROVIDER_CLIENT_ID,
      defaultLevel: e.PROVIDER_DEFAULT_LEVEL,
      timeoutMs: e.PROVIDER_TIMEOUT_MS,
      legacyImport: e.PROVIDER_LEGACY_IMPORT,
      simPort: e.PROVIDER_SIM_PORT,
      simHost: e.PROVIDER_SIM_HOST,
      simCallbackUrl: e.PROVIDER_SIM_CALLBACK_URL,
    },
    webhooks: {
      signingKeysJson: e.WEBHOOK_SIGNING_KEYS,
      signingKeysFile: e.WEBHOOK_SIGNING_KEYS_FILE ? path.resolve(e.WEBHOOK_SIGNING_KEYS_FILE) : undefined,
      /** The Ed25519 ring of the Standard Webhooks `webhook-signature` header. */
      standardKeysJson: e.STANDARD_WEBHOOK_KEYS,
      standardKeysFile: e.STANDARD_WEBHOOK_KEYS_FILE ? path.resolve(e.STANDARD_WEBHOOK_KEYS_FILE) : undefined,
      /** The rings' public keys alone (what the API publishes), when given: else the public halves of the rings. */
      publicKeysJson: e.WEBHOOK_SIGNING_PUBLIC_KEYS,
      publicKeysFile: e.WEBHOOK_SIGNING_PUBLIC_KEYS_FILE ? path.resolve(e.WEBHOOK_SIGNING_PUBLIC_KEYS_FILE) : undefined,
      standardPublicKeysJson: e.STANDARD_WEBHOOK_PUBLIC_KEYS,
      standardPublicKeysFile: e.STANDARD_WEBHOOK_PUBLIC_KEYS_FILE ? path.resolve(e.STANDARD_WEBHOOK_PUBLIC_KEYS_FILE) : undefined,
      /** Development only: allow http:// and non-public addresses as webhook destinations. */
      allowInsecureUrls: e.WEBHOOK_ALLOW_INSECURE_URLS,
      taskQueue: e.WEBHOOK_TASK_QUEUE,
      /** Dispatcher activities (first attempts and redeliveries, claimed in batches). */
      dispatchers: e.WEBHOOK_DISPATCHERS,
      /** Requests in flight per dispatcher, and per subscription and per business within it. */
      maxInFlight: e.WEBHOOK_MAX_IN_FLIGHT,
      maxInFlightPerSubscription: e.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION,
      maxInFlightPerBusiness: e.WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS,
      /** Redelivery requests (POST /events/{id}/redeliver, POST /notification/{id}/redeliver) a business may make per second. */
      redeliveriesPerSecond: e.WEBHOOK_REDELIVERIES_PER_SECOND,
      /** Pause between claims when nothing is due. */
      pollMs: e.WEBHOOK_POLL_MS,
      /** A subscription failing continuously this long is disabled. */
      disableAfterMs: e.WEBHOOK_DISABLE_AFTER_MS,
    },
    signedPayloads: {
      signingKeysJson: e.SIGNED_PAYLOAD_KEYS,
      signingKeysFile: e.SIGNED_PAYLOAD_KEYS_FILE ? path.resolve(e.SIGNED_PAYLOAD_KEYS_FILE) : undefined,
      /** A signed payload is valid this long after it is read (never past its identity document's expiry). */
      ttlSeconds: e.SIGNED_PAYLOAD_TTL_SECONDS,
    },
    evidence: {
      /** The Ed25519 ring that signs evidence bundles (the admin CLI's `evidence export`; no API or worker reads it). */
      signingKeysJson: e.EVIDENCE_SIGNING_KEYS,
      signingKeysFile: e.EVIDENCE_SIGNING_KEYS_FILE ? path.resolve(e.EVIDENCE_SIGNING_KEYS_FILE) : undefined,
    },
    auditCheckpoints: {
      /** The Ed25519 ring that signs checkpoints of the audit chain (workers and the admin CLI; never the database). */
      signingKeysJson: e.AUDIT_CHECKPOINT_KEYS,
      signingKeysFile: e.AUDIT_CHECKPOINT_KEYS_FILE ? path.resolve(e.AUDIT_CHECKPOINT_KEYS_FILE) : undefined,
      /** The public keys alone (the API, `vouch audit verify`): no private half in the processes that only check. */
      publicKeysJson: e.AUDIT_CHECKPOINT_PUBLIC_KEYS,
      publicKeysFile: e.AUDIT_CHECKPOINT_PUBLIC_KEYS_FILE ? path.resolve(e.AUDIT_CHECKPOINT_PUBLIC_KEYS_FILE) : undefined,
      /** How often the schedule signs every business's head that moved. */
      everyMinutes: e.AUDIT_CHECKPOINT_EVERY_MINUTES,
    },
    universalKyc: {
      /** How long a submission waits for its data and identity document before it is decided as incomplete. */
      deadlineSeconds: e.UKYC_SUBMISSION_DEADLINE_SECONDS,
    },
    metrics: {
      /** Required (as `Authorization: Bearer …`) by /metrics outside the sandbox. */
      token: e.METRICS_TOKEN,
      /** The worker process's own metrics endpoint (split mode); 0 turns it off. */
      workerPort: e.WORKER_METRICS_PORT,
      workerHost: e.WORKER_METRICS_HOST,
      /** The loopback port the Temporal core exports its metrics on (0: a free one). */
      corePort: e.TEMPORAL_CORE_METRICS_PORT,
    },
    payloadCodec: {
      keysJson: e.PAYLOAD_CODEC_KEYS,
      keysFile: e.PAYLOAD_CODEC_KEYS_FILE ? path.resolve(e.PAYLOAD_CODEC_KEYS_FILE) : undefined,
      /** What clients and workers do with a payload that is not encrypted (temporal/payload-codec.ts). */
      plaintext: (e.PAYLOAD_CODEC_ACCEPT_PLAINTEXT ? 'pass' : 'refuse') as 'pass' | 'refuse',
      /** Required (as `Authorization: Bearer …`) by the codec endpoint outside the sandbox; unset there → the endpoint refuses every call. */
      accessToken: e.CODEC_ACCESS_TOKEN,
      /** Browser origins allowed to call the codec endpoint (the Temporal UI's). */
      corsOrigins: (e.CODEC_CORS_ORIGINS ?? `http://127.0.0.1:${e.TEMPORAL_UI_PORT},http://localhost:${e.TEMPORAL_UI_PORT}`)
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    },
    universalKyb: {
      /** How long a submission waits for its owners' KYC decisions before it is decided as it stands. */
      deadlineSeconds: e.KYB_SUBMISSION_DEADLINE_SECONDS,
    },
    files: {
      store: e.FILE_STORE,
      /** The local file store's directory (default DATA_DIR/files). */
      dir: e.FILE_STORE_DIR ? path.resolve(e.FILE_STORE_DIR) : path.join(dataDir, 'files'),
      /** Signs the local store's download links (FILE_LINK_SECRET; in the sandbox generated into DATA_DIR when unset). */
      linkSecret: e.FILE_LINK_SECRET,
      /** Where our API is reached from outside (local download links are made absolute with it; else the request's origin). */
      publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
      /** How long a presigned download URL works. */
      presignedUrlTtlSeconds: e.PRESIGNED_URL_TTL_SECONDS,
      /** How many downloads one link serves (DOWNLOAD_LINK_MAX_USES). */
      downloadLinkMaxUses: e.DOWNLOAD_LINK_MAX_USES,
      /** A download not sent within this time is cut off (a trickling reader; bytes deleted mid-download). */
      downloadDeadlineMs: e.DOWNLOAD_DEADLINE_SECONDS * 1000,
      s3: e.S3_BUCKET
        ? {
            bucket: e.S3_BUCKET,
            region: e.S3_REGION,
            endpoint: e.S3_ENDPOINT,
            forcePathStyle: e.S3_FORCE_PATH_STYLE ?? Boolean(e.S3_ENDPOINT),
            prefix: e.S3_KEY_PREFIX,
            objectLockDays: e.S3_OBJECT_LOCK_DAYS,
          }
        : undefined,
      maxFileBytes: e.UPLOAD_MAX_FILE_BYTES,
      maxFiles: e.UPLOAD_MAX_FILES,
      /** Uploads one API process receives at once, in all and per business; beyond them a request waits up to slotWaitMs, then 503 / 429. */
      uploadsPerProcess: e.UPLOADS_PER_PROCESS,
      uploadsPerBusiness: Math.min(e.UPLOADS_PER_BUSINESS, e.UPLOADS_PER_PROCESS),
      slotWaitMs: e.UPLOAD_SLOT_WAIT_MS,
      /** An upload with no new bytes for this long is cut off (408). */
      idleTimeoutMs: e.UPLOAD_IDLE_TIMEOUT_MS,
      /** Where uploads are received before they go to the file store (default DATA_DIR/uploads). */
      uploadTmpDir: e.UPLOAD_TMP_DIR ? path.resolve(e.UPLOAD_TMP_DIR) : path.join(dataDir, 'uploads'),
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
  };
}

/** DATABASE_URL's user, when a migration URL names another one (else there is one role, and nothing to grant). */
function serviceRoleOf(url: string | undefined, migrationUrl: string | undefined): string | undefined {
  if (!url || !migrationUrl) return undefined;
  const user = decodeURIComponent(new URL(url).username);
  return user && user !== decodeURIComponent(new URL(migrationUrl).username) ? user : undefined;
}
