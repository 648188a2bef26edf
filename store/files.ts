// Uploaded files' metadata (the `files` table; the bytes are in the file store under storage_key),
// and the bytes the store must lose (`file_store_cleanup`).
//
// Bytes and rows are written apart — bytes first, then the row in the transaction that records the
// upload — so either can be left alone by a crash or a race (an upload finishing as its entity is
// deleted). file_store_cleanup closes that gap: a key is entered there before its bytes are written
// (due an hour later) and leaves it in the transaction that records its row; a deleted entity's keys
// are entered in the transaction that deletes it (due at once). Whatever is due and named by no
// `files` row is removed from the store by housekeeping (activities/housekeeping.ts), so bytes
// without a row do not outlive a crash by more than the hour (and a minute).
import { recordAudit } from './audit-log.ts';
import { iso, type Db, type Queryable, type Tx } from './db.ts';

export type LiveFile = { storageKey: string; fileName: string | null; contentType: string };

/** A live file of the entity (of the business), for a download; retired files and other entities' files are not. */
export async function liveFileOf(db: Queryable, businessId: string, entityId: string, fileId: string): Promise<LiveFile | null> {
  const [row] = await db.query<{ storage_key: string; file_name: string | null; content_type: string }>(
    'SELECT storage_key, file_name, content_type FROM files WHERE id = $1 AND entity_id = $2 AND business_id = $3 AND retired_at IS NULL',
    [fileId, entityId, businessId],
  );
  return row ? { storageKey: row.storage_key, fileName: row.file_name, contentType: row.content_type } : null;
}

/** A file a download link names by its store key: whose it is, and whether it is live (not retired); none once its entity is deleted or sealed. */
export type LinkedFile = LiveFile & { fileId: string; businessId: string; entityId: string; live: boolean };

export async function fileByStorageKey(db: Queryable, storageKey: string): Promise<LinkedFile | null> {
  const [row] = await db.query<{ id: string; business_id: string; entity_id: string; file_name: string | null; content_type: string; live: boolean }>(
    // through the entities view: a sealed entity's files are gone for a link as for every read
    'SELECT f.id, f.business_id, f.entity_id, f.file_name, f.content_type, f.retired_at IS NULL AS live FROM files f ' +
      'JOIN entities e ON e.id = f.entity_id WHERE f.storage_key = $1',
    [storageKey],
  );
  return row
    ? {
        storageKey,
        fileName: row.file_name,
        contentType: row.content_type,
        fileId: String(row.id),
        businessId: String(row.business_id),
        entityId: String(row.entity_id),
        live: row.live,
      }
    : null;
}

/** The store keys of an entity's files, retired ones included (the bytes to remove with the entity). */
export async function fileKeysOf(db: Queryable, entityId: string): Promise<string[]> {
  const rows = await db.query<{ storage_key: string }>('SELECT storage_key FROM files WHERE entity_id = $1', [entityId]);
  return rows.map((r) => r.storage_key);
}

/** Before bytes are written under these keys: removed by housekeeping after `graceSeconds` unless a row claims them first. */
export async function expectBytes(db: Queryable, keys: readonly string[], graceSeconds: number): Promise<void> {
  if (keys.length === 0) return;
  await db.query(
    `INSERT INTO file_store_cleanup (storage_key, not_before) SELECT k, now() + make_interval(secs => $2) FROM unnest($1::text[]) AS k
     ON CONFLICT (storage_key) DO NOTHING`,
    [keys, graceSeconds],
  );
}

/**
 * In the transaction that records their rows: these keys' bytes are wanted. False when one was
 * taken by housekeeping meanwhile (its bytes may be gone): the caller must not record it.
 */
export async function claimBytes(db: Queryable, keys: readonly string[]): Promise<boolean> {
  if (keys.length === 0) return true;
  const claimed = await db.query('DELETE FROM file_store_cleanup WHERE storage_key = ANY ($1::text[]) AND taken_at IS NULL RETURNING 1', [keys]);
  return claimed.length === keys.length;
}

/** These keys' bytes are to go now (their rows are gone, or were never written). */
export async function discardBytes(db: Queryable, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.query(
    `INSERT INTO file_store_cleanup (storage_key, not_before) SELECT k, now() FROM unnest($1::text[]) AS k
     ON CONFLICT (storage_key) DO UPDATE SET not_before = now()`,
    [keys],
  );
}

/**
 * Takes up to `limit` keys whose bytes are due to be removed — due, and named by no `files` row —
 * leased for `leaseSeconds`: they stay in the table (marked taken, so no upload can claim them any
 * more) until forgetBytes once their bytes are gone, and are due again if the lease runs out first
 * (the pass died). A due key that a row names was claimed after all, and is dropped. An upload
 * claiming a key at the same moment waits on its row and then finds it taken (claimBytes).
 */
export async function takeDueBytes(db: Db, limit: number, leaseSeconds: number): Promise<string[]> {
  return db.tx(async (tx) => {
    const rows = await tx.query<{ storage_key: string; named: boolean }>(
      `UPDATE file_store_cleanup c SET taken_at = now(), not_before = now() + make_interval(secs => $2)
        WHERE c.storage_key IN (
          SELECT storage_key FROM file_store_cleanup WHERE not_before <= now() ORDER BY not_before LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING c.storage_key, EXISTS (SELECT 1 FROM files f WHERE f.storage_key = c.storage_key) AS named`,
      [limit, leaseSeconds],
    );
    await forgetBytes(
      tx,
      rows.filter((r) => r.named).map((r) => r.storage_key),
    );
    return rows.filter((r) => !r.named).map((r) => r.storage_key);
  });
}

/** Done with these keys (their bytes removed). */
export async function forgetBytes(db: Queryable, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.query('DELETE FROM file_store_cleanup WHERE storage_key = ANY ($1::text[])', [keys]);
}

/** Bytes that could not be removed just now: due again after `delaySeconds` (still taken). */
export async function retryBytes(db: Queryable, keys: readonly string[], delaySeconds: number): Promise<void> {
  if (keys.length === 0) return;
  await db.query(
    `INSERT INTO file_store_cleanup (storage_key, not_before) SELECT k, now() + make_interval(secs => $2) FROM unnest($1::text[]) AS k
     ON CONFLICT (storage_key) DO UPDATE SET not_before = EXCLUDED.not_before`,
    [keys, delaySeconds],
  );
}

/** An upload whose bytes are in the file store under `storageKey`, about to be recorded. */
export type StoredFile = { id: string; fileName: string | null; contentType: string; size: number; sha256: string; storageKey: string };

/** Where a stored file belongs: its entity and requirement, a KYB document type, an open universal KYC submission. */
export type FilePlace = { businessId: string; entityId: string; slug: string; documentType?: string | null; submissionId?: string | null };

/**
 * Records a stored file's row and claims its bytes (they leave file_store_cleanup with it), in the
 * caller's transaction; answers when it was uploaded. The one place the `files` table is written.
 */
export async function insertFileRow(tx: Tx, f: StoredFile, place: FilePlace): Promise<string> {
  const [row] = await tx.query<{ uploaded_at: string }>(
    `INSERT INTO files (id, business_id, entity_id, slug, document_type, submission_id, file_name, content_type, size, sha256, storage_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING uploaded_at`,
    [
      f.id,
      place.businessId,
      place.entityId,
      place.slug,
      place.documentType ?? null,
      place.submissionId ?? null,
      f.fileName,
      f.contentType,
      f.size,
      f.sha256,
      f.storageKey,
    ],
  );
  if (!(await claimBytes(tx, [f.storageKey]))) throw new Error(`the bytes of ${f.storageKey} were removed as unclaimed before their row was written`);
  recordAudit(tx, {
    businessId: place.businessId,
    action: 'file.submitted',
    entityId: place.entityId,
    subject: { type: 'file', id: f.id },
    details: { slug: place.slug, documentType: place.documentType ?? null, sha256: f.sha256, submissionId: place.submissionId ?? null },
  });
  return iso(row!.uploaded_at);
}

/** Retires the live files of one KYB document kind of an entity (a new upload of that kind replaces them). */
export async function retireFilesOfKind(tx: Tx, entityId: string, slug: string, documentType: string): Promise<void> {
  const retired = await tx.query<{ id: string; business_id: string }>(
    'UPDATE files SET retired_at = now() WHERE entity_id = $1 AND slug = $2 AND document_type = $3 AND retired_at IS NULL RETURNING id, business_id',
    [entityId, slug, documentType],
  );
  for (const r of retired) {
    recordAudit(tx, {
      businessId: String(r.business_id),
      action: 'file.retired',
      entityId,
      subject: { type: 'file', id: String(r.id) },
      details: { slug, documentType },
    });
  }
}
