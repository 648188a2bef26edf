import type { Db } from '../store/db.ts';
import { purgeRateLimitWindows } from '../store/rate-limit.ts';

export function createHousekeepingActivities(deps: { db: Db }) {
  return {
    /** Deletes request-count windows older than a minute; returns how many rows went. */
    purgeRateLimitWindows: () => purgeRateLimitWindows(deps.db, Date.now() - 60_000),
  };
}
