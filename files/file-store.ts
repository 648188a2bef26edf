// The file store: where uploaded files' bytes live (never in PostgreSQL rows or workflow histories;
// PostgreSQL keeps their metadata and key). One interface, two implementations: a local directory
// (the default) and S3-compatible object storage. Bytes go in from a file on disk and come out as a
// stream, so no file is ever held whole in memory. Download links are ours whatever the store
// (download-links.ts): the API checks each use against PostgreSQL, so a replaced or deleted file is
// gone from every link ever issued.
import type { Readable } from 'node:stream';
import { inPool } from '../lib/pool.ts';

/** A file on local disk (an upload as received), its bytes about to be stored. */
export type LocalFile = { path: string; size: number };

export interface FileStore {
  /** Which store this is, for logs and health (`local-directory`, `s3`). */
  readonly kind: string;
  /** Stores the file's bytes under the key (the local file may be moved, not copied); a key is written once. */
  put(key: string, file: LocalFile, contentType: string): Promise<void>;
  /** The bytes under the key as a stream, with their size; null when there are none. */
  open(key: string): Promise<{ stream: Readable; size: number } | null>;
  /** Removes the bytes under the key (no error when there are none). */
  delete(key: string): Promise<void>;
  /**
   * Object storage: a URL of the storage itself, valid a few seconds, that a checked download link
   * redirects to (the bytes never pass through the API). Absent: the API streams the bytes.
   */
  directUrl?(key: string, options: DownloadOptions): Promise<string>;
  /**
   * A small document the service keeps beside the files — a signed checkpoint of the audit chain
   * (domain/audit-checkpoint.ts) — where the database's credentials cannot reach: written once,
   * never over another (a second write of a key fails), locked where the store can (S3 Object Lock).
   */
  writeDocument(key: string, bytes: Uint8Array): Promise<void>;
  /** A document's bytes; null when there is none. */
  readDocument(key: string): Promise<Buffer | null>;
  /** The keys of the documents under a prefix, in key order. */
  listDocuments(prefix: string): Promise<string[]>;
}

/** Documents' keys: a kind, an id, and a name of digits, letters, dashes and dots (nothing that leaves its directory). */
export const isDocumentKey = (key: string) => /^[a-z-]+\/[0-9a-f-]{36}\/[0-9A-Za-z-]+\.json$/.test(key);
export const isDocumentPrefix = (prefix: string) => /^[a-z-]+\/[0-9a-f-]{36}\/$/.test(prefix);

export type DownloadOptions = { expiresInSeconds: number; fileName: string | null; contentType: string };

/** Keys name the business and the entity first, so one business's files can be found and removed together. */
export function fileKey(businessId: string, entityId: string, fileId: string): string {
  return `${businessId}/${entityId}/${fileId}`;
}

/** Whether a string is a key fileKey makes (three ids): nothing else names a file, in a path or a link. */
export const isFileKey = (key: string) => /^[0-9a-f-]{36}\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/.test(key);

/**
 * Removes the bytes under these keys, `atOnce` removals at a time (an object store answers each in
 * tens of milliseconds); says which went and which the store refused (with why), so the caller can
 * record both.
 */
export async function removeAll(
  store: FileStore,
  keys: readonly string[],
  atOnce = 8,
): Promise<{ removed: string[]; failed: { key: string; err: unknown }[] }> {
  const removed: string[] = [];
  const failed: { key: string; err: unknown }[] = [];
  await inPool(keys, atOnce, async (key) => {
    try {
      await store.delete(key);
      removed.push(key);
    } catch (err) {
      failed.push({ key, err });
    }
  });
  return { removed, failed };
}

/** The Content-Disposition of a download: an attachment, named when the file has a name (RFC 6266 / 5987). */
export function attachmentDisposition(fileName: string | null): string {
  if (!fileName) return 'attachment';
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
