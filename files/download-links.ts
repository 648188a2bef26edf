// Download links, whatever the file store: `/files/<claims>.<signature>`, where the claims (base64url
// JSON: the store key, the expiry and a nonce; short, so a link stays far below any URL limit) are signed
// with HMAC-SHA256 under a secret only the API holds. A link whose claims or signature changed, or
// whose expiry passed, is refused; no API key is needed to use one. A link is a credential: logs
// name it only by a hash (redactedLinkPath). The nonce makes each link issued its own, even two for one
// file in one second: each counts its uses apart (DOWNLOAD_LINK_MAX_USES).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isFileKey } from './file-store.ts';

export const DOWNLOAD_PATH_PREFIX = '/files/';

/** k: the store key; e: the expiry (Unix seconds); n: the nonce (links made before it had none). */
type Claims = { k: string; e: number; n?: string };
export type DownloadLink = { key: string; expiresAt: Date };
/** The longest link we make is about 230 characters; the API refuses longer ones unread. */
export const MAX_LINK_LENGTH = 512;

const sign = (secret: Buffer, claims: string) => createHmac('sha256', secret).update(claims).digest('base64url');

export function signDownloadLink(secret: Buffer, link: DownloadLink, nonce?: string): string {
  const c: Claims = { k: link.key, e: Math.floor(link.expiresAt.getTime() / 1000), ...(nonce ? { n: nonce } : {}) };
  const claims = Buffer.from(JSON.stringify(c)).toString('base64url');
  return `${DOWNLOAD_PATH_PREFIX}${claims}.${sign(secret, claims)}`;
}

/** The link's contents when its signature holds and it has not expired; otherwise why not. */
export function openDownloadLink(secret: Buffer, token: string, now: Date): { ok: true; link: DownloadLink } | { ok: false; reason: 'invalid' | 'expired' } {
  const [claims, signature, extra] = token.split('.');
  if (!claims || !signature || extra !== undefined) return { ok: false, reason: 'invalid' };
  const expected = Buffer.from(sign(secret, claims));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
  let c: Claims;
  try {
    c = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as Claims;
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  if (typeof c.k !== 'string' || typeof c.e !== 'number') return { ok: false, reason: 'invalid' };
  if (c.e * 1000 <= now.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, link: { key: c.k, expiresAt: new Date(c.e * 1000) } };
}

/** A request path with a download link's token replaced by a short hash of it (for logs: the hash tells two uses of one link apart, and opens nothing). */
export function redactedLinkPath(path: string): string {
  if (!path.startsWith(DOWNLOAD_PATH_PREFIX)) return path;
  return `${DOWNLOAD_PATH_PREFIX}[link sha256:${createHash('sha256').update(path.slice(DOWNLOAD_PATH_PREFIX.length)).digest('hex').slice(0, 12)}]`;
}

export type DownloadLinks = {
  /** A link (a path on the API) to the key, valid for `expiresInSeconds`. */
  issue(key: string, expiresInSeconds: number): { path: string; expiresAt: string };
  open(link: string, now: Date): { ok: true; link: DownloadLink } | { ok: false; reason: 'invalid' | 'expired' };
};

export function downloadLinks(secret: Buffer): DownloadLinks {
  return {
    issue(key, expiresInSeconds) {
      const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + expiresInSeconds * 1000);
      return { path: signDownloadLink(secret, { key, expiresAt }, randomBytes(9).toString('base64url')), expiresAt: expiresAt.toISOString() };
    },
    open(link, now) {
      const token = link.startsWith(DOWNLOAD_PATH_PREFIX) ? link.slice(DOWNLOAD_PATH_PREFIX.length) : link;
      const opened = openDownloadLink(secret, token, now);
      if (opened.ok && !isFileKey(opened.link.key)) return { ok: false, reason: 'invalid' };
      return opened;
    },
  };
}
