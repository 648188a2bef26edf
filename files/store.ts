// The file store: where uploaded files' bytes live (never in PostgreSQL rows or workflow histories;
// PostgreSQL keeps their metadata and key). One interface; the local directory is the default, and
// object storage implements the same interface.
export interface FileStore {
  /** Which store this is, for logs and health (`local-directory`, `s3`). */
  readonly kind: string;
  /** Stores the bytes under the key; a key is written once. */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes under the key, or null when there are none. */
  get(key: string): Promise<Buffer | null>;
  /** Removes the bytes under the key (no error when there are none). */
  delete(key: string): Promise<void>;
}

/** Keys name the business and the entity first, so one business's files can be found and removed together. */
export function fileKey(businessId: string, entityId: string, fileId: string): string {
  return `${businessId}/${entityId}/${fileId}`;
}
