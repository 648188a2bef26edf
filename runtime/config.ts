// Every setting the service reads from its environment, in one place, validated once at start.
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_KYB_DEADLINE_SECONDS } from '../domain/kyb.ts';
import { DEFAULT_UKYC_DEADLINE_SECONDS } from '../domain/universal-kyc.ts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

const envSchema = z.object({
  VOUCH_ENVIRONMENT: z.enum(['sandbox', 'staging', 'production']).default('sandbox'),
  HOST: z.string().default('127.0.0.1'),
  PORT: port.default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().default('.data'),
  DATABASE_URL: z.string().url().optional(),
  DATABASE_POOL_SIZE: positiveInt.default(10),
  PGLITE_PORT: port.default(5433),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_TLS_CLIENT_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_CLIENT_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  TEMPORAL_UI_PORT: port.default(8233),
  TEMPORAL_DEV_PORT: port.default(7233),
  TEMPORAL_CLI: z.string().optional(),
  TASK_QUEUE: z.string().min(1).default('vouch'),
  PROVIDER_TASK_QUEUE: z.string().min(1).default('vouch-provider'),
  SYNC_TASK_QUEUE: z.string().min(1).default('vouch-sync'),
  BATCH_CONCURRENCY: positiveInt.default(50),
  BATCH_PAGE_SIZE: positiveInt.max(1000).default(500),
  BATCH_PROVIDER_MAX_ATTEMPTS: positiveInt.default(8),
  BATCH_PROVIDER_RETRY_INITIAL_MS: positiveInt.default(2000),
  SYNC_IMPORT_RATE_LIMIT_PER_SECOND: positiveInt.default(3),
  PROVIDER_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(10),
  PROVIDER_BASE_URL: z.string().url().optional(),
  PROVIDER_APP_TOKEN: z.string().optional(),
  PROVIDER_SECRET_KEY: z.string().optional(),
  PROVIDER_WEBHOOK_SECRET: z.string().optional(),
  PROVIDER_CLIENT_ID: z.string().min(1).default('vouch'),
  PROVIDER_DEFAULT_LEVEL: z.string().min(1).default('basic-kyc-level'),
  PROVIDER_TIMEOUT_MS: positiveInt.default(10_000),
  PROVIDER_LEGACY_IMPORT: bool.default(false),
  PROVIDER_SIM_PORT: port.default(8090),
  WEBHOOK_SIGNING_KEYS: z.string().optional(),
  WEBHOOK_SIGNING_KEYS_FILE: z.string().optional(),
  STANDARD_WEBHOOK_KEYS: z.string().optional(),
  STANDARD_WEBHOOK_KEYS_FILE: z.string().optional(),
  WEBHOOK_ALLOW_INSECURE_URLS: bool.default(false),
  WEBHOOK_TASK_QUEUE: z.string().min(1).default('vouch-webhooks'),
  WEBHOOK_DISPATCHERS: positiveInt.max(64).default(2),
  WEBHOOK_MAX_IN_FLIGHT: positiveInt.default(256),
  WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: positiveInt.default(16),
  WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS: positiveInt.default(64),
  WEBHOOK_REDELIVERIES_PER_SECOND: positiveInt.default(10),
  WEBHOOK_POLL_MS: positiveInt.default(100),
  WORKFLOW_BUNDLE_PATH: z.string().default('dist/workflow-bundle.js'),
  API_RATE_LIMIT_PER_SECOND: positiveInt.default(100),
  JSON_BODY_LIMIT_BYTES: positiveInt.default(1024 * 1024),
  SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
  SIGNED_PAYLOAD_KEYS: z.string().optional(),
  SIGNED_PAYLOAD_KEYS_FILE: z.string().optional(),
  SIGNED_PAYLOAD_TTL_SECONDS: positiveInt.default(86_400),
  UKYC_SUBMISSION_DEADLINE_SECONDS: positiveInt.default(DEFAULT_UKYC_DEADLINE_SECONDS),
  FILE_STORE: z.enum(['local', 's3']).default('local'),
  FILE_STORE_DIR: z.string().optional(),
  FILE_LINK_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  PRESIGNED_URL_TTL_SECONDS: positiveInt.max(7 * 86_400).default(900),
  DOWNLOAD_DEADLINE_SECONDS: positiveInt.default(120),
  S3_BUCKET: z.string().min(3).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ENDPOINT: z.string().url().optional(),
  S3_FORCE_PATH_STYLE: bool.optional(),
  S3_KEY_PREFIX: z.string().default(''),
  METRICS_TOKEN: z.string().min(32, 'at least 32 characters').optional(),
  WORKER_METRICS_PORT: port.default(9464),
  WORKER_METRICS_HOST: z.string().default('127.0.0.1'),
  TEMPORAL_CORE_METRICS_PORT: port.default(0),
  PAYLOAD_CODEC_KEYS: z.string().optional(),
  PAYLOAD_CODEC_KEYS_FILE: z.string().optional(),
  CODEC_ACCESS_TOKEN: z.string().min(32, 'at least 32 characters').optional(),
  CODEC_CORS_ORIGINS: z.string().optional(),
  KYB_SUBMISSION_DEADLINE_SECONDS: positiveInt.default(DEFAULT_KYB_DEADLINE_SECONDS),
  UPLOAD_MAX_FILE_BYTES: positiveInt.default(10 * 1024 * 1024),
  UPLOAD_MAX_FILES: positiveInt.max(50).default(10),
  UPLOADS_PER_PROCESS: positiveInt.default(16),
  UPLOADS_PER_BUSINESS: positiveInt.default(4),
  UPLOAD_SLOT_WAIT_MS: z.coerce.number().int().min(0).default(10_000),
  UPLOAD_IDLE_TIMEOUT_MS: positiveInt.default(30_000),
  UPLOAD_TMP_DIR: z.string().optional(),
});

/** Every setting's name (the environment variables this service reads). */
export const SETTING_NAMES: readonly string[] = Object.keys(envSchema.shape);

export type Config = {
  environment: 'sandbox' | 'staging' | 'production';
  http: { host: string; port: number; jsonBodyLimitBytes: number; rateLimitPerSecond: number; syncImportRateLimitPerSecond: number };
  logLevel: string;
  dataDir: string;
  database: { url: string | undefined; poolSize: number; pglitePort: number };
  temporal: {
    address: string;
    namespace: string;
    apiKey: string | undefined;
    tls: boolean;
    /** mTLS: PEM files of our client certificate and its key (both or neither). */
    tlsClientCertPath: string | undefined;
    tlsClientKeyPath: string | undefined;
    /** PEM file of the CA that signed the server's certificate (a private CA). */
    tlsServerCaCertPath: string | undefined;
    /** The name the server's certificate is checked against, when it is not the address's host. */
    tlsServerName: string | undefined;
    uiPort: number;
    /** Set when TEMPORAL_ADDRESS was given: `npm start` then uses that server instead of its own. */
    addressGiven: boolean;
    devPort: number;
    cli: string | undefined;
    taskQueue: string;
    providerTaskQueue: string;
    /** Sync imports: workflows and all their activities, on workers of their own. */
    syncTaskQueue: string;
    providerRateLimitPerSecond: number;
    batchConcurrency: number;
    batchPageSize: number;
    /** Attempts of one provider call in a batch before the row fails as PROVIDER_UNAVAILABLE (retryable). */
    batchProviderMaxAttempts: number;
    batchProviderRetryInitialMs: number;
    workflowBundlePath: string;
  };
  provider: {
    /** Unset: `npm start` runs the bundled simulator and fills in its development credentials. */
    baseUrl: string | undefined;
    appToken: string | undefined;
    secretKey: string | undefined;
    webhookSecret: string | undefined;
    /** Our client id at the provider: donors name it as `forClientId` when minting share tokens. */
    clientId: string;
    defaultLevel: string;
    timeoutMs: number;
    legacyImport: boolean;
    simPort: number;
  };
  webhooks: {
    signingKeysJson: string | undefined;
    signingKeysFile: string | undefined;
    /** The Ed25519 ring of the Standard Webhooks `webhook-signature` header. */
    standardKeysJson: string | undefined;
    standardKeysFile: string | undefined;
    /** Development only: allow http:// and non-public addresses as webhook destinations. */
    allowInsecureUrls: boolean;
    taskQueue: string;
    /** Dispatcher activities (first attempts and redeliveries, claimed in batches). */
    dispatchers: number;
    /** Requests in flight per dispatcher, and per subscription and per business within it. */
    maxInFlight: number;
    maxInFlightPerSubscription: number;
    maxInFlightPerBusiness: number;
    /** Redelivery requests (POST /events/{id}/redeliver, POST /notification/{id}/redeliver) a business may make per second. */
    redeliveriesPerSecond: number;
    /** Pause between claims when nothing is due. */
    pollMs: number;
  };
  signedPayloads: {
    signingKeysJson: string | undefined;
    signingKeysFile: string | undefined;
    /** A signed payload is valid this long after it is read (never past its identity document's expiry). */
    ttlSeconds: number;
  };
  universalKyc: {
    /** How long a submission waits for its data and identity document before it is decided as incomplete. */
    deadlineSeconds: number;
  };
  metrics: {
    /** Required (as `Authorization: Bearer …`) by /metrics outside the sandbox. */
    token: string | undefined;
    /** The worker process's own metrics endpoint (split mode); 0 turns it off. */
    workerPort: number;
    workerHost: string;
    /** The loopback port the Temporal core exports its metrics on (0: a free one). */
    corePort: number;
  };
  payloadCodec: {
    keysJson: string | undefined;
    keysFile: string | undefined;
    /** Required (as `Authorization: Bearer …`) by the codec endpoint outside the sandbox; unset there → the endpoint refuses every call. */
    accessToken: string | undefined;
    /** Browser origins allowed to call the codec endpoint (the Temporal UI's). */
    corsOrigins: string[];
  };
  universalKyb: {
    /** How long a submission waits for its owners' KYC decisions before it is decided as it stands. */
    deadlineSeconds: number;
  };
  files: {
    store: 'local' | 's3';
    /** The local file store's directory (default DATA_DIR/files). */
    dir: string;
    /** Signs the local store's download links (FILE_LINK_SECRET; in the sandbox generated into DATA_DIR when unset). */
    linkSecret: string | undefined;
    /** Where our API is reached from outside (local download links are made absolute with it; else the request's origin). */
    publicBaseUrl: string | undefined;
    /** How long a presigned download URL works. */
    presignedUrlTtlSeconds: number;
    /** A download not sent within this time is cut off (a trickling reader; bytes deleted mid-download). */
    downloadDeadlineMs: number;
    s3: { bucket: string; region: string; endpoint: string | undefined; forcePathStyle: boolean; prefix: string } | undefined;
    maxFileBytes: number;
    maxFiles: number;
    /** Uploads one API process receives at once, in all and per business; beyond them a request waits up to slotWaitMs, then 503 / 429. */
    uploadsPerProcess: number;
    uploadsPerBusiness: number;
    slotWaitMs: number;
    /** An upload with no new bytes for this long is cut off (408). */
    idleTimeoutMs: number;
    /** Where uploads are received before they go to the file store (default DATA_DIR/uploads). */
    uploadTmpDir: string;
  };
  shutdownGraceMs: number;
};

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (Boolean(e.TEMPORAL_TLS_CLIENT_CERT_PATH) !== Boolean(e.TEMPORAL_TLS_CLIENT_KEY_PATH)) {
    throw new ConfigError('invalid configuration:\n  TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH go together: set both for mTLS, or neither');
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
      syncImportRateLimitPerSecond: e.SYNC_IMPORT_RATE_LIMIT_PER_SECOND,
    },
    logLevel: e.LOG_LEVEL,
    dataDir,
    database: { url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE, pglitePort: e.PGLITE_PORT },
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      apiKey: e.TEMPORAL_API_KEY,
      tls: e.TEMPORAL_TLS || Boolean(e.TEMPORAL_TLS_CLIENT_CERT_PATH || e.TEMPORAL_TLS_SERVER_CA_CERT_PATH || e.TEMPORAL_TLS_SERVER_NAME),
      tlsClientCertPath: e.TEMPORAL_TLS_CLIENT_CERT_PATH && path.resolve(e.TEMPORAL_TLS_CLIENT_CERT_PATH),
      tlsClientKeyPath: e.TEMPORAL_TLS_CLIENT_KEY_PATH && path.resolve(e.TEMPORAL_TLS_CLIENT_KEY_PATH),
      tlsServerCaCertPath: e.TEMPORAL_TLS_SERVER_CA_CERT_PATH && path.resolve(e.TEMPORAL_TLS_SERVER_CA_CERT_PATH),
      tlsServerName: e.TEMPORAL_TLS_SERVER_NAME,
      uiPort: e.TEMPORAL_UI_PORT,
      addressGiven: Boolean(env.TEMPORAL_ADDRESS),
      devPort: e.TEMPORAL_DEV_PORT,
      cli: e.TEMPORAL_CLI,
      taskQueue: e.TASK_QUEUE,
      providerTaskQueue: e.PROVIDER_TASK_QUEUE,
      syncTaskQueue: e.SYNC_TASK_QUEUE,
      batchConcurrency: e.BATCH_CONCURRENCY,
      batchPageSize: e.BATCH_PAGE_SIZE,
      batchProviderMaxAttempts: e.BATCH_PROVIDER_MAX_ATTEMPTS,
      batchProviderRetryInitialMs: e.BATCH_PROVIDER_RETRY_INITIAL_MS,
      providerRateLimitPerSecond: e.PROVIDER_RATE_LIMIT_PER_SECOND,
      workflowBundlePath: path.resolve(e.WORKFLOW_BUNDLE_PATH),
    },
    provider: {
      baseUrl: e.PROVIDER_BASE_URL,
      appToken: e.PROVIDER_APP_TOKEN,
      secretKey: e.PROVIDER_SECRET_KEY,
      webhookSecret: e.PROVIDER_WEBHOOK_SECRET,
      clientId: e.PROVIDER_CLIENT_ID,
      defaultLevel: e.PROVIDER_DEFAULT_LEVEL,
      timeoutMs: e.PROVIDER_TIMEOUT_MS,
      legacyImport: e.PROVIDER_LEGACY_IMPORT,
      simPort: e.PROVIDER_SIM_PORT,
    },
    webhooks: {
      signingKeysJson: e.WEBHOOK_SIGNING_KEYS,
      signingKeysFile: e.WEBHOOK_SIGNING_KEYS_FILE ? path.resolve(e.WEBHOOK_SIGNING_KEYS_FILE) : undefined,
      standardKeysJson: e.STANDARD_WEBHOOK_KEYS,
      standardKeysFile: e.STANDARD_WEBHOOK_KEYS_FILE ? path.resolve(e.STANDARD_WEBHOOK_KEYS_FILE) : undefined,
      allowInsecureUrls: e.WEBHOOK_ALLOW_INSECURE_URLS,
      taskQueue: e.WEBHOOK_TASK_QUEUE,
      dispatchers: e.WEBHOOK_DISPATCHERS,
      maxInFlight: e.WEBHOOK_MAX_IN_FLIGHT,
      maxInFlightPerSubscription: e.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION,
      maxInFlightPerBusiness: e.WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS,
      redeliveriesPerSecond: e.WEBHOOK_REDELIVERIES_PER_SECOND,
      pollMs: e.WEBHOOK_POLL_MS,
    },
    signedPayloads: {
      signingKeysJson: e.SIGNED_PAYLOAD_KEYS,
      signingKeysFile: e.SIGNED_PAYLOAD_KEYS_FILE ? path.resolve(e.SIGNED_PAYLOAD_KEYS_FILE) : undefined,
      ttlSeconds: e.SIGNED_PAYLOAD_TTL_SECONDS,
    },
    universalKyc: { deadlineSeconds: e.UKYC_SUBMISSION_DEADLINE_SECONDS },
    metrics: { token: e.METRICS_TOKEN, workerPort: e.WORKER_METRICS_PORT, workerHost: e.WORKER_METRICS_HOST, corePort: e.TEMPORAL_CORE_METRICS_PORT },
    payloadCodec: {
      keysJson: e.PAYLOAD_CODEC_KEYS,
      keysFile: e.PAYLOAD_CODEC_KEYS_FILE ? path.resolve(e.PAYLOAD_CODEC_KEYS_FILE) : undefined,
      accessToken: e.CODEC_ACCESS_TOKEN,
      corsOrigins: (e.CODEC_CORS_ORIGINS ?? `http://127.0.0.1:${e.TEMPORAL_UI_PORT},http://localhost:${e.TEMPORAL_UI_PORT}`)
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    },
    universalKyb: { deadlineSeconds: e.KYB_SUBMISSION_DEADLINE_SECONDS },
    files: {
      store: e.FILE_STORE,
      dir: e.FILE_STORE_DIR ? path.resolve(e.FILE_STORE_DIR) : path.join(dataDir, 'files'),
      linkSecret: e.FILE_LINK_SECRET,
      publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
      presignedUrlTtlSeconds: e.PRESIGNED_URL_TTL_SECONDS,
      downloadDeadlineMs: e.DOWNLOAD_DEADLINE_SECONDS * 1000,
      s3: e.S3_BUCKET
        ? { bucket: e.S3_BUCKET, region: e.S3_REGION, endpoint: e.S3_ENDPOINT, forcePathStyle: e.S3_FORCE_PATH_STYLE ?? Boolean(e.S3_ENDPOINT), prefix: e.S3_KEY_PREFIX }
        : undefined,
      maxFileBytes: e.UPLOAD_MAX_FILE_BYTES,
      maxFiles: e.UPLOAD_MAX_FILES,
      uploadsPerProcess: e.UPLOADS_PER_PROCESS,
      uploadsPerBusiness: Math.min(e.UPLOADS_PER_BUSINESS, e.UPLOADS_PER_PROCESS),
      slotWaitMs: e.UPLOAD_SLOT_WAIT_MS,
      idleTimeoutMs: e.UPLOAD_IDLE_TIMEOUT_MS,
      uploadTmpDir: e.UPLOAD_TMP_DIR ? path.resolve(e.UPLOAD_TMP_DIR) : path.join(dataDir, 'uploads'),
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
  };
}
