// What every use case may use: the database, the workflow starters and the runs (to cancel one, or
// ask whether Temporal answers), the configuration, the logger and the signing keys. Built once per
// API process. Routes read only `settings`: the few limits they enforce and print in the API document.
import type { Logger } from 'pino';
import type { DownloadLinks } from '../files/download-links.ts';
import type { FileStore } from '../files/file-store.ts';
import type { Config } from '../runtime/config.ts';
import type { RawHeaders } from '../runtime/provider.ts';
import type { KeyRings } from '../runtime/signing-keys.ts';
import type { Runs } from '../temporal/runs.ts';
import type { Starters } from '../temporal/starters.ts';
import type { Business } from '../store/businesses.ts';
import type { Db } from '../store/db.ts';

export type UseCaseContext = {
  db: Db;
  /** Starts and messages workflows (temporal/starters.ts). */
  start: Starters;
  /** Cancels runs, asks whether Temporal answers, encodes payloads (temporal/runs.ts). */
  runs: Runs;
  config: Config;
  /** What routes may know of the configuration (routes never read `config`: a test holds them to it). */
  settings: RouteSettings;
  log: Logger;
  /** Where uploaded files' bytes are kept. */
  files: FileStore;
  /** Signs and opens download links (no API key needed to use one). */
  links: DownloadLinks;
  /** The webhook and signed-payload signing key rings. */
  keys: KeyRings;
  /** Checks a provider callback's signature (runtime/provider.ts). */
  verifyProviderCallback(raw: Buffer, headers: RawHeaders): boolean;
};

/** The caller of a use case: the business behind the API key. */
export type Caller = Business;

/** The limits routes enforce before a use case runs and state in the API document. */
export type RouteSettings = {
  /** The sandbox: `/sandbox/*` exists, `/codec` and `/metrics` are open. */
  sandbox: boolean;
  files: Pick<Config['files'], 'maxFileBytes' | 'maxFiles' | 'presignedUrlTtlSeconds'>;
  universalKybDeadlineSeconds: number;
  /** Sync imports a business may request per second. */
  syncImportsPerSecond: number;
  webhooks: Pick<Config['webhooks'], 'redeliveriesPerSecond' | 'disableAfterMs' | 'maxInFlightPerSubscription'>;
};

export const routeSettingsOf = (config: Config): RouteSettings => ({
  sandbox: config.environment === 'sandbox',
  files: { maxFileBytes: config.files.maxFileBytes, maxFiles: config.files.maxFiles, presignedUrlTtlSeconds: config.files.presignedUrlTtlSeconds },
  universalKybDeadlineSeconds: config.universalKyb.deadlineSeconds,
  syncImportsPerSecond: config.http.syncImportRateLimitPerSecond,
  webhooks: {
    redeliveriesPerSecond: config.webhooks.redeliveriesPerSecond,
    disableAfterMs: config.webhooks.disableAfterMs,
    maxInFlightPerSubscription: config.webhooks.maxInFlightPerSubscription,
  },
});
