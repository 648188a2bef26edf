// The file store in a local directory (the default: DATA_DIR/files, or FILE_STORE_DIR; in split
// mode a volume both processes mount). A file is written to a temporary name and renamed, so a
// reader never sees half of one. Its download links are signed with the API's secret
// (download-links.ts) and served by the API.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DOWNLOAD_PATH_PREFIX, openDownloadLink, signDownloadLink } from './download-links.ts';
import type { FileStore } from './store.ts';

const KEY = /^[0-9a-f-]{36}\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/;

export function localDirectoryStore(dir: string, linkSecret: Buffer): FileStore {
  const where = (key: string) => {
    if (!KEY.test(key)) throw new Error(`not a file key: ${key}`);
    return path.join(dir, ...key.split('/'));
  };
  return {
    kind: 'local-directory',
    async put(key, bytes) {
      const target = where(key);
      await mkdir(path.dirname(target), { recursive: true });
      const temporary = `${target}.${randomUUID()}.partial`;
      await writeFile(temporary, bytes, { mode: 0o600 });
      await rename(temporary, target);
    },
    async get(key) {
      try {
        return await readFile(where(key));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async delete(key) {
      await rm(where(key), { force: true });
    },
    async presign(key, options) {
      where(key);
      const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + options.expiresInSeconds * 1000);
      return { url: signDownloadLink(linkSecret, { key, expiresAt }), expiresAt: expiresAt.toISOString() };
    },
    openLink(link, now) {
      const token = link.startsWith(DOWNLOAD_PATH_PREFIX) ? link.slice(DOWNLOAD_PATH_PREFIX.length) : link;
      const opened = openDownloadLink(linkSecret, token, now);
      if (opened.ok && !KEY.test(opened.link.key)) return { ok: false, reason: 'invalid' };
      return opened;
    },
  };
}
