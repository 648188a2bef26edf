// The file store the configuration names: a local directory (FILE_STORE_DIR, default DATA_DIR/files).
import { localDirectoryStore } from '../files/local-directory.ts';
import type { FileStore } from '../files/store.ts';
import type { Config } from './config.ts';

export function createFileStore(config: Config): FileStore {
  return localDirectoryStore(config.files.dir);
}
