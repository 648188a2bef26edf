// The file store the configuration names: a local directory (FILE_STORE=local, the default:
// FILE_STORE_DIR or DATA_DIR/files) or S3-compatible object storage (FILE_STORE=s3: S3_BUCKET,
// S3_ENDPOINT, S3_REGION, credentials from the AWS chain); and the download links of either, signed
// with FILE_LINK_SECRET.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { downloadLinks, type DownloadLinks } from '../files/download-links.ts';
import { localDirectoryStore } from '../files/local-directory.ts';
import { s3Store } from '../files/s3.ts';
import type { FileStore } from '../files/file-store.ts';
import { ConfigError, type Config } from './config.ts';
import { readOrCreateOnce } from './secret-file.ts';

export function createFileStore(config: Config): FileStore {
  if (config.files.store === 's3') return s3Store(config.files.s3!);
  return localDirectoryStore(config.files.dir);
}

export function createDownloadLinks(config: Config): DownloadLinks {
  return downloadLinks(fileLinkSecret(config));
}

/**
 * The secret that signs download links: FILE_LINK_SECRET, else (sandbox) a
 * random one kept in DATA_DIR/file-link-secret, made on first start and never committed. Every API
 * process that serves the same files must have the same secret.
 */
export function fileLinkSecret(config: Config): Buffer {
  if (config.files.linkSecret) return Buffer.from(config.files.linkSecret, 'utf8');
  const file = path.join(config.dataDir, 'file-link-secret');
  const make = () => {
    if (config.environment !== 'sandbox') throw new ConfigError(`FILE_LINK_SECRET is required outside the sandbox (${file} does not exist)`);
    return randomBytes(32).toString('base64url');
  };
  return Buffer.from(readOrCreateOnce(file, make).trim(), 'base64url');
}
