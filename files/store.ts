// The file store: where uploaded files' bytes live (never in PostgreSQL rows or workflow histories;
// PostgreSQL keeps their metadata and key). One interface, two implementations: a local directory
// (the default; its download links are signed and served by our API) and S3-compatible object
// storage (its own presigned URLs).
import type { DownloadLink } from './download-links.ts';
export interface FileStore {
  /** Which store this is, for logs and health (`local-directory`, `s3`). */
  readonly kind: string;
  /** Stores the bytes under the key; a key is written once. */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes under the key, or null when there are none. */
  get(key: string): Promise<Buffer | null>;
  /** Removes the bytes under the key (no error when there are none). */
  delete(key: string): Promise<void>;
  /**
   * A URL that downloads the bytes without an API key until `expiresAt` (then, or when changed in
   * any way, it is refused with 403). A local store's URL is a path on our API (`/files/…`).
   */
  presign(key: string, options: DownloadOptions): Promise<{ url: string; expiresAt: string }>;
  /** A store whose links our API serves (the local directory) opens them: what to serve, or why not. */
  openLink?(link: string, now: Date): OpenedLink;
}

export type OpenedLink = { ok: true; link: DownloadLink } | { ok: false; reason: 'invalid' | 'expired' };

export type DownloadOptions = { expiresInSeconds: number; fileName: string | null; contentType: string };

/** Keys name the business and the entity first, so one business's files can be found and removed together. */
export function fileKey(businessId: string, entityId: string, fileId: string): string {
  return `${businessId}/${entityId}/${fileId}`;
}

/** The Content-Disposition of a download: an attachment, named when the file has a name (RFC 6266 / 5987). */
export function attachmentDisposition(fileName: string | null): string {
  if (!fileName) return 'attachment';
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
