// The file store in a local directory (the default: DATA_DIR/files, or FILE_STORE_DIR; in split
// mode a volume both processes mount). A file is moved in from its temporary file (copied when the
// two are on different file systems, to a temporary name then renamed), so a reader never sees half
// of one. Directories are 0700 and files 0600: only this service reads them.
import { randomUUID } from 'node:crypto';
import { chmod, copyFile, link, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isDocumentKey, isDocumentPrefix, isFileKey, type FileStore } from './file-store.ts';

export function localDirectoryStore(dir: string): FileStore {
  const where = (key: string) => {
    if (!isFileKey(key)) throw new Error(`not a file key: ${key}`);
    return path.join(dir, ...key.split('/'));
  };
  const document = (key: string) => {
    if (!isDocumentKey(key)) throw new Error(`not a document key: ${key}`);
    return path.join(dir, ...key.split('/'));
  };
  return {
    kind: 'local-directory',
    async put(key, file) {
      const target = where(key);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      try {
        await rename(file.path, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        const temporary = `${target}.${randomUUID()}.partial`;
        try {
          await copyFile(file.path, temporary);
          await rename(temporary, target);
        } catch (copyErr) {
          await rm(temporary, { force: true });
          throw copyErr;
        }
      }
      await chmod(target, 0o600);
    },
    async open(key) {
      // opened first, then measured: a file deleted in between is either read whole or not found
      const handle = await open(where(key), 'r').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
      if (!handle) return null;
      try {
        const { size } = await handle.stat();
        return { stream: handle.createReadStream(), size };
      } catch (err) {
        await handle.close();
        throw err;
      }
    },
    async delete(key) {
      await rm(where(key), { force: true });
    },
    async writeDocument(key, bytes) {
      const target = document(key);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      // whole or not at all (a reader never sees half of one), written once (a link never replaces a file), read-only after
      const temporary = `${target}.${randomUUID()}.partial`;
      await writeFile(temporary, bytes, { flag: 'wx', mode: 0o400 });
      try {
        await link(temporary, target);
      } finally {
        await rm(temporary, { force: true });
      }
    },
    async readDocument(key) {
      return readFile(document(key)).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
    },
    async listDocuments(prefix) {
      if (!isDocumentPrefix(prefix)) throw new Error(`not a document prefix: ${prefix}`);
      const names = await readdir(path.join(dir, ...prefix.split('/'))).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return [] as string[];
        throw err;
      });
      return names
        .map((n) => `${prefix}${n}`)
        .filter(isDocumentKey)
        .sort();
    },
  };
}
