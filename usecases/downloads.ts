// Downloads of any entity's uploaded files (KYB documents, universal KYC documents): a presigned
// link for a live file, and the bytes behind a link, checked at every use.
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { liveFileByStorageKey, liveFileOf } from '../store/files.ts';
import type { Caller, UseCaseContext } from './context.ts';

export const presignedUrlSchema = z.object({ url: z.string(), expiresAt: z.string() });

/** GET /entity/{entityId}/file/{fileId}/presigned-url: a download URL for a live file of that entity. */
export async function presignFile(
  uc: UseCaseContext,
  caller: Caller,
  entityId: string,
  fileId: string,
  baseUrl: string,
): Promise<Outcome<z.input<typeof presignedUrlSchema>>> {
  const file = await liveFileOf(uc.db, caller.id, entityId, fileId);
  if (!file)
    return refuse(
      'fileNotFound',
      `No file ${fileId} belongs to entity ${entityId} (replaced files are gone; an owner's files` +
        ` are under the owner's entityId); GET /entity/${entityId}/documents lists its current ` +
        `files.`,
      { parameter: 'fileId' },
    );
  const link = uc.links.issue(file.storageKey, uc.config.files.presignedUrlTtlSeconds);
  return done({ url: new URL(link.path, `${uc.config.files.publicBaseUrl ?? baseUrl}/`).toString(), expiresAt: link.expiresAt });
}

/** How a download is served: the bytes as a stream, or (object storage) a redirect to the storage's own short-lived URL. */
export type Download = { contentType: string; fileName: string | null } & ({ stream: Readable; size: number } | { redirectTo: string });

/** How long the storage's own URL behind a checked link lives: long enough to follow a redirect. */
const DIRECT_URL_SECONDS = 60;

/**
 * GET /files/{link}: the bytes behind a download link, without an API key. The link is checked at
 * every use: expired or changed → 403; its file replaced, retired or deleted since → 404.
 */
export async function downloadFile(uc: UseCaseContext, link: string): Promise<Outcome<Download>> {
  const opened = uc.links.open(link, new Date());
  if (!opened.ok) {
    return refuse(
      'downloadLinkRefused',
      opened.reason === 'expired'
        ? 'The download link has expired; ask for a new one.'
        : 'The download link is not valid (changed or not ours); ask for a new one with GET /entity/{entityId}/file/{fileId}/presigned-url.',
      { parameter: 'link' },
    );
  }
  const gone = () =>
    refuse(
      'fileNotFound',
      'The file is gone (replaced by a newer upload, or its entity was deleted); GET /entity/{entityId}/documents lists the current files.',
      { parameter: 'link' },
    );
  const file = await liveFileByStorageKey(uc.db, opened.link.key);
  if (!file) return gone();
  const meta = { contentType: file.contentType, fileName: file.fileName };
  if (uc.files.directUrl) return done({ ...meta, redirectTo: await uc.files.directUrl(opened.link.key, { ...meta, expiresInSeconds: DIRECT_URL_SECONDS }) });
  const bytes = await uc.files.open(opened.link.key);
  return bytes ? done({ ...meta, ...bytes }) : gone();
}
