// The slots of provider calls, fleet-wide (domain/provider-pace.ts): one row whose next_at moves on
// by the spacing with every slot taken, on the database's clock, so every worker process of every
// machine shares one pace.
import type { Db } from './db.ts';

/** Takes the next slot; returns how long to wait before calling (ms, 0 when the slot is now). */
export async function takeProviderSlot(db: Db, spacingMs: number): Promise<number> {
  const [row] = await db.query<{ wait_ms: number }>(
    `UPDATE provider_pace SET next_at = GREATEST(next_at, clock_timestamp()) + make_interval(secs => $1::float8 / 1000)
      WHERE id = 1
      RETURNING GREATEST(0, extract(epoch FROM (next_at - make_interval(secs => $1::float8 / 1000) - clock_timestamp())) * 1000)::float8 AS wait_ms`,
    [spacingMs],
  );
  return Number(row?.wait_ms ?? 0);
}
