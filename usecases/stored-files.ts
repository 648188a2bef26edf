// Uploaded files into the file store, and bytes out of it, without leaving bytes that no row names:
// each key is expected (store/files.ts) before its bytes are written, so a crash or a refusal between
// the bytes and their row leaves them due for housekeeping; bytes to go are removed at once where
// the store allows and left due where it does not.
import { fileKey, removeAll } from '../files/file-store.ts';
import { discardBytes, expectBytes, forgetBytes, type StoredFile } from '../store/files.ts';
import type { UseCaseContext } from './context.ts';
import type { CheckedFile } from './uploads.ts';

/** How long bytes written for an upload wait for their row before housekeeping removes them. */
export const UPLOAD_GRACE_SECONDS = 3600;

/** Puts checked uploads into the file store under keys of the entity they belong to. */
export async function putUploads(context: UseCaseContext, businessId: string, entityId: string, files: readonly CheckedFile[]): Promise<StoredFile[]> {
  const stored = files.map((f) => ({
    id: f.id,
    fileName: f.fileName,
    contentType: f.contentType,
    size: f.size,
    sha256: f.sha256,
    storageKey: fileKey(businessId, entityId, f.id),
  }));
  await expectBytes(
    context.db,
    stored.map((s) => s.storageKey),
    UPLOAD_GRACE_SECONDS,
  );
  for (const [i, f] of files.entries()) await context.files.put(stored[i]!.storageKey, { path: f.path, size: f.size }, f.contentType);
  return stored;
}

/** Removes these keys' bytes now; what the store does not remove stays due, and housekeeping tries again. */
export async function removeBytes(
  context: Pick<UseCaseContext, 'db' | 'files' | 'log'>,
  keys: readonly string[],
  options: { alreadyDue?: boolean } = {},
): Promise<void> {
  if (keys.length === 0) return;
  if (!options.alreadyDue) await discardBytes(context.db, keys);
  const { removed, failed } = await removeAll(context.files, keys);
  for (const { err } of failed) context.log.warn({ err }, 'file bytes not removed yet; housekeeping removes them');
  await forgetBytes(context.db, removed);
}
