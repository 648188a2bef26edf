// Clean-up steps of the housekeeping workflow: short-lived rows, and file-store bytes that no row names.
import type { Logger } from 'pino';
import type { FileStore } from '../files/store.ts';
import type { Db } from '../store/db.ts';
import { retryBytes, takeDueBytes } from '../store/files.ts';
import { purgeRateLimitWindows } from '../store/rate-limit.ts';

/** Keys handled per pass; a backlog drains over successive passes (one a minute). */
const BYTES_PER_PASS = 500;

export function createHousekeepingActivities(deps: { db: Db; files: FileStore; log: Logger }) {
  return {
    /** Deletes request-count windows older than a minute; returns how many rows went. */
    purgeRateLimitWindows: () => purgeRateLimitWindows(deps.db, Date.now() - 60_000),

    /**
     * Removes from the file store the bytes that are due and that no `files` row names (an
     * entity's deletion whose removal failed, an upload cut off between its bytes and its row);
     * returns how many went. What the store refuses now is due again in five minutes.
     */
    async removeStrayFileBytes(): Promise<number> {
      const keys = await takeDueBytes(deps.db, BYTES_PER_PASS);
      const failed: string[] = [];
      for (const key of keys) {
        await deps.files.delete(key).catch((err: unknown) => {
          deps.log.warn({ err }, 'file bytes not removed; trying again in five minutes');
          failed.push(key);
        });
      }
      await retryBytes(deps.db, failed, 300);
      return keys.length - failed.length;
    },
  };
}
