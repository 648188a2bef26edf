// Steps of the housekeeping workflow: short-lived rows, file-store bytes that no row names, and the
// events that come from the passing of time (reminders) or a new release (new features).
import type { Logger } from 'pino';
import { removeAll, type FileStore } from '../files/file-store.ts';
import type { Db } from '../store/db.ts';
import { forgetBytes, retryBytes, takeDueBytes } from '../store/files.ts';
import { features } from '../domain/feature-catalog.ts';
import { announceNewFeatures, remindWaitingSubmissions } from '../onboarding/scheduled-events.ts';
import { purgeExpiredLinkUses } from '../store/download-link-uses.ts';
import { purgeRateLimitWindows } from '../store/rate-limit.ts';

/** Keys handled per pass; a backlog drains over successive passes (one a minute). */
const BYTES_PER_PASS = 200;
/**
 * How long a pass holds the keys it took: longer than the activity may run (30 s, three attempts),
 * so a retried pass does not take them again while the first may still be removing them.
 */
const LEASE_SECONDS = 300;

export function createHousekeepingActivities(deps: { db: Db; files: FileStore; log: Logger }) {
  return {
    /**
     * Deletes the short-lived counts: request-count windows older than a minute, and the use counts
     * of download links that have expired (the step kept its first name: running histories call it so);
     * returns how many rows went.
     */
    purgeRateLimitWindows: async () => (await purgeRateLimitWindows(deps.db, Date.now() - 60_000)) + (await purgeExpiredLinkUses(deps.db, new Date())),

    /** Reminds waiting submissions whose deadline is near (reminder events); returns how many. */
    sendReminders: () => remindWaitingSubmissions(deps.db, new Date()),

    /** Tells every business of the catalog's new features (new_feature events); returns how many features were new. */
    announceNewFeatures: () => announceNewFeatures(deps.db, features, new Date()),

    /**
     * Removes from the file store the bytes that are due and that no `files` row names (an
     * entity's deletion whose removal failed, an upload cut off between its bytes and its row);
     * returns how many went. A key leaves the table only once its bytes are gone: what the store
     * refuses now is due again in five minutes, and the keys of a pass that dies are due again when
     * its lease runs out.
     */
    async removeStrayFileBytes(): Promise<number> {
      const keys = await takeDueBytes(deps.db, BYTES_PER_PASS, LEASE_SECONDS);
      const { removed, failed } = await removeAll(deps.files, keys);
      for (const { err } of failed) deps.log.warn({ err }, 'file bytes not removed; trying again in five minutes');
      await forgetBytes(deps.db, removed);
      await retryBytes(
        deps.db,
        failed.map((f) => f.key),
        300,
      );
      return removed.length;
    },
  };
}
