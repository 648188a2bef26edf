// The file store in a local directory (the default: DATA_DIR/files, or FILE_STORE_DIR; in split
// mode a volume both processes mount). A file is written to a temporary name and renamed, so a
// reader never sees half of one.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileStore } from './store.ts';

const KEY = /^[0-9a-f-]{36}\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/;

export function localDirectoryStore(dir: string): FileStore {
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
  };
}
