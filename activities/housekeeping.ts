// Clean-up steps of the housekeeping workflow: short-lived rows, and file-store bytes that no row names.
import type { Logger } from 'pino';
import type { FileStore } from '../files/store.ts';
import type { Db } from '../store/db.ts';
import { forgetBytes, retryBytes, takeDueBytes } from '../store/files.ts';
import { purgeRateLimitWindows } from '../store/rate-limit.ts';

/** Keys handled per pass; a backlog drains over successive passes (one a minute). */
const BYTES_PER_PASS = 200;
/** Removals under way at once (an object store answers each in tens of milliseconds). */
const REMOVALS_AT_ONCE = 8;
/**
 * How long a pass holds the keys it took: longer than the activity may run (30 s, three attempts),
 * so a retried pass does not take them again while the first may still be removing them.
 */
const LEASE_SECONDS = 300;

export function createHousekeepingActivities(deps: { db: Db; files: FileStore; log: Logger }) {
  return {
    /** Deletes request-count windows older than a minute; returns how many rows went. */
    purgeRateLimitWindows: () => purgeRateLimitWindows(deps.db, Date.now() - 60_000),

    /**
     * Removes from the file store the bytes that are due and that no `files` row names (an
     * entity's deletion whose removal failed, an upload cut off between its bytes and its row);
     * returns how many went. A key leaves the table only once its bytes are gone: what the store
     * refuses now is due again in five minutes, and the keys of a pass that dies are due again when
     * its lease runs out.
     */
    async removeStrayFileBytes(): Promise<number> {
      const keys = await takeDueBytes(deps.db, BYTES_PER_PASS, LEASE_SECONDS);
      const removed: string[] = [];
      const failed: string[] = [];
      let next = 0;
      const remover = async () => {
        while (next < keys.length) {
          const key = keys[next++]!;
          try {
            await deps.files.delete(key);
            removed.push(key);
          } catch (err) {
            deps.log.warn({ err }, 'file bytes not removed; trying again in five minutes');
            failed.push(key);
          }
        }
      };
      await Promise.all(Array.from({ length: REMOVALS_AT_ONCE }, remover));
      await forgetBytes(deps.db, removed);
      await retryBytes(deps.db, failed, 300);
      return removed.length;
    },
  };
}
