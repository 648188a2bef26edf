// Downloads of any entity's uploaded files (KYB documents, universal KYC documents): a presigned
// link for a live file, and the bytes behind a link, checked at every use.
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { sha256Hex } from '../domain/digests.ts';
import { errorCatalogue } from '../domain/errors.ts';
import { done, refuse, type Outcome, type Refusal } from '../domain/outcome.ts';
import { DOWNLOAD_PATH_PREFIX } from '../files/download-links.ts';
import { actAs } from '../store/audit-actor.ts';
import { countDownloadLinkUse } from '../store/download-link-uses.ts';
import { recordAuditAlone } from '../store/audit-log.ts';
import { fileByStorageKey, liveFileOf } from '../store/files.ts';
import type { Caller, UseCaseContext } from './context.ts';

/**
 * What the audit log calls a download link: the SHA-256 of its token (the link is a credential and
 * is never stored; the same hash, cut short, names it in the logs).
 */
export const downloadLinkId = (link: string): string => sha256Hex(link.startsWith(DOWNLOAD_PATH_PREFIX) ? link.slice(DOWNLOAD_PATH_PREFIX.length) : link);

export const presignedUrlSchema = z.object({ url: z.string(), expiresAt: z.string() });

/** GET /entity/{entityId}/file/{fileId}/presigned-url: a download URL for a live file of that entity. */
export async function presignFile(
  context: UseCaseContext,
  caller: Caller,
  entityId: string,
  fileId: string,
  baseUrl: string,
): Promise<Outcome<z.input<typeof presignedUrlSchema>>> {
  const file = await liveFileOf(context.db, caller.id, entityId, fileId);
  if (!file) {
    const refusal = refuse(
      'fileNotFound',
      `No file ${fileId} belongs to entity ${entityId} (replaced files are gone; an owner's files` +
        ` are under the owner's entityId); GET /entity/${entityId}/documents lists its current ` +
        `files.`,
      { parameter: 'fileId' },
    );
    // refused for a business we know: its log shows the attempt (the entity named may not be its own: a subject, not its entityId)
    await recordAuditAlone(context.db, {
      businessId: caller.id,
      action: 'download_link.issued',
      subject: { type: 'file', id: fileId },
      details: { fileId, entityId },
      outcome: errorCatalogue[refusal.error].code,
    });
    return refusal;
  }
  const link = context.links.issue(file.storageKey, context.config.files.presignedUrlTtlSeconds);
  // a read of a person's data: the link is issued only once its entry is written
  await recordAuditAlone(context.db, {
    businessId: caller.id,
    action: 'download_link.issued',
    entityId,
    subject: { type: 'file', id: fileId },
    details: { fileId, linkId: downloadLinkId(link.path), expiresAt: link.expiresAt },
  });
  return done({ url: new URL(link.path, `${context.config.files.publicBaseUrl ?? baseUrl}/`).toString(), expiresAt: link.expiresAt });
}

/** How a download is served: the bytes as a stream, or (object storage) a redirect to the storage's own short-lived URL. */
export type Download = { contentType: string; fileName: string | null } & ({ stream: Readable; size: number } | { redirectTo: string });

/** How long the storage's own URL behind a checked link lives: long enough to follow a redirect. */
const DIRECT_URL_SECONDS = 60;

/**
 * GET /files/{link}: the bytes behind a download link, without an API key. The link is checked at
 * every use: expired or changed → 403; its file replaced, retired or deleted since → 404; used
 * DOWNLOAD_LINK_MAX_USES times already → 403, recorded the first time only (a flood of fetches of
 * a used link must not fill its owner's audit log), each such fetch one statement.
 */
export async function downloadFile(context: UseCaseContext, link: string, requestId: string | null): Promise<Outcome<Download>> {
  const linkId = downloadLinkId(link);
  // the one acting is the link itself (whoever holds it needs no API key)
  return actAs({ type: 'download_link', id: linkId }, requestId, () => download(context, link, linkId));
}

async function download(context: UseCaseContext, link: string, linkId: string): Promise<Outcome<Download>> {
  const opened = context.links.open(link, new Date());
  if (!opened.ok) {
    return refuse(
      'downloadLinkRefused',
      opened.reason === 'expired'
        ? 'The download link has expired; ask for a new one.'
        : 'The download link is not valid (changed or not ours); ask for a new one with GET /entity/{entityId}/file/{fileId}/presigned-url.',
      { parameter: 'link' },
    );
  }
  const uses = await countDownloadLinkUse(context.db, linkId, opened.link.expiresAt);
  const max = context.config.files.downloadLinkMaxUses;
  const usedUp = () =>
    refuse(
      'downloadLinkRefused',
      `The download link has served its ${max} download(s); ask for a new one with GET /entity/{entityId}/file/{fileId}/presigned-url.`,
      {
        parameter: 'link',
      },
    );
  if (uses > max + 1) return usedUp(); // its refusal is on record already
  const gone = () =>
    refuse(
      'fileNotFound',
      'The file is gone (replaced by a newer upload, or its entity was deleted); GET /entity/{entityId}/documents lists the current files.',
      { parameter: 'link' },
    );
  const file = await fileByStorageKey(context.db, opened.link.key);
  if (!file) return gone(); // its entity is gone: no business to record it for
  // each use is an entry of the file's business, written before any byte is served
  const record = (outcome: Refusal | null) =>
    recordAuditAlone(context.db, {
      businessId: file.businessId,
      action: 'file.downloaded',
      entityId: file.entityId,
      subject: { type: 'file', id: file.fileId },
      details: { fileId: file.fileId, linkId },
      outcome: outcome ? errorCatalogue[outcome.error].code : 'ok',
    });
  const refused = async (r: Refusal): Promise<Refusal> => {
    await record(r);
    return r;
  };
  if (uses > max) return refused(usedUp());
  if (!file.live) return refused(gone());
  const meta = { contentType: file.contentType, fileName: file.fileName };
  if (context.files.directUrl) {
    const redirectTo = await context.files.directUrl(opened.link.key, { ...meta, expiresInSeconds: DIRECT_URL_SECONDS });
    await record(null);
    return done({ ...meta, redirectTo });
  }
  const bytes = await context.files.open(opened.link.key);
  if (!bytes) return refused(gone());
  try {
    await record(null);
  } catch (err) {
    bytes.stream.destroy();
    throw err;
  }
  return done({ ...meta, ...bytes });
}
