// A fixed-window request counter kept in PostgreSQL, so a limit holds across every API process.
import type { Db } from './db.ts';

export type RateDecision = { allowed: boolean; count: number; retryAfterSeconds: number };

export async function takeRateToken(db: Db, bucket: string, limitPerWindow: number, windowMs = 1000, now = Date.now()): Promise<RateDecision> {
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const [row] = await db.query<{ count: number }>(
    `INSERT INTO rate_limit_windows (bucket, window_start, count) VALUES ($1, $2, 1)
     ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
     RETURNING count`,
    [bucket, windowStart],
  );
  const count = Number(row?.count ?? 1);
  return {
    allowed: count <= limitPerWindow,
    count,
    retryAfterSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)),
  };
}

/** Deletes windows that started before `before` (epoch ms); the housekeeping workflow calls it. */
export async function purgeRateLimitWindows(db: Db, before: number): Promise<number> {
  const [row] = await db.query<{ n: string }>(
    'WITH gone AS (DELETE FROM rate_limit_windows WHERE window_start < $1 RETURNING 1) SELECT count(*) AS n FROM gone',
    [before],
  );
  return Number(row?.n ?? 0);
}
