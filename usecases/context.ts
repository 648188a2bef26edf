// What every use case may use: the database, the workflow starters (and the client, to cancel a
// running workflow), the configuration, the logger and the signing keys. Built once per API process.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DownloadLinks } from '../files/download-links.ts';
import type { FileStore } from '../files/store.ts';
import type { Config } from '../runtime/config.ts';
import type { RawHeaders } from '../runtime/provider.ts';
import type { KeyRings } from '../runtime/signing-keys.ts';
import type { Starters } from '../runtime/starters.ts';
import type { Business } from '../store/businesses.ts';
import type { Db } from '../store/db.ts';

export type UseCaseContext = {
  db: Db;
  temporal: Client;
  start: Starters;
  config: Config;
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
