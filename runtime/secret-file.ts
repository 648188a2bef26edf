// Files of keys and secrets the sandbox makes on first start. Several processes start at once (the
// API, the worker, test files in parallel), so a file must appear whole or not at all: the content
// is written to a private temporary file beside it and linked into place, which fails when another
// process got there first; then everyone reads the one that won. A replacement (a rotation) is
// written the same way and renamed over the old file, so a reader never sees half of either.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function writeBeside(file: string, content: string): string {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
  return temporary;
}

/**
 * The file's content, made from `make()` when the file does not exist (once, even when processes
 * race). `make` may throw to refuse (where keys must be supplied, not generated): nothing is written.
 */
export function readOrCreateOnce(file: string, make: () => string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const temporary = writeBeside(file, make());
  try {
    linkSync(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // else another process made it first
  } finally {
    rmSync(temporary, { force: true });
  }
  return readFileSync(file, 'utf8');
}

/** Replaces the file's content in one step. */
export function replaceAtomically(file: string, content: string): void {
  const temporary = writeBeside(file, content);
  try {
    renameSync(temporary, file);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}

/**
 * Runs `fn` holding `${file}.lock`, made with O_EXCL and holding a token of this holder's, so that of
 * processes changing the file at once (a rotation at start in each) one at a time reads and writes
 * it. A lock older than `staleMs` was left by a killed process: it is taken over by renaming it away
 * (only one process's rename succeeds), and a holder removes the lock only while it still holds its
 * own token.
 */
export async function withFileLock<T>(file: string, fn: () => T | Promise<T>, staleMs = 30_000): Promise<T> {
  const lock = `${file}.lock`;
  const token = `${process.pid}-${randomBytes(8).toString('hex')}`;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const until = Date.now() + 2 * staleMs;
  for (;;) {
    try {
      writeFileSync(lock, token, { mode: 0o600, flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let age = 0;
      try {
        age = Date.now() - statSync(lock).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      if (age > staleMs) {
        const away = `${lock}.${token}.stale`;
        try {
          renameSync(lock, away); // one taker wins; the others find it gone and try again
          rmSync(away, { force: true });
        } catch {
          // another process took it over first
        }
      } else if (Date.now() > until) throw new Error(`${lock} is held by another process`);
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    try {
      if (readFileSync(lock, 'utf8') === token) rmSync(lock, { force: true });
    } catch {
      // gone already
    }
  }
}
