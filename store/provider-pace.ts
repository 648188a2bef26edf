// The pace of provider calls, fleet-wide (domain/provider-pace.ts), on the database's clock so every
// worker process of every machine shares it: the slots (one row whose next_at moves on by the
// spacing with every slot taken) and the window of sends that holds the cap (migration 025).
import type { Db } from './db.ts';

/**
 * Takes the next slot if it is at most `withinMs` away: whether it was taken, and how long until it
 * (ms, 0 when it is now). A slot further away is left for a call that can wait for it: an attempt
 * that took one it could not use would push every later call back by the spacing, and on a saturated
 * machine such burnt slots fed on themselves.
 */
export async function takeProviderSlot(db: Db, spacingMs: number, withinMs: number): Promise<{ taken: boolean; waitMs: number }> {
  const [row] = await db.query<{ wait_ms: number; taken: boolean }>(
    `WITH cur AS (SELECT GREATEST(next_at, clock_timestamp()) AS slot FROM provider_pace WHERE id = 1 FOR UPDATE),
     took AS (
       UPDATE provider_pace p SET next_at = cur.slot + make_interval(secs => $1::float8 / 1000)
         FROM cur WHERE p.id = 1 AND cur.slot <= clock_timestamp() + make_interval(secs => $2::float8 / 1000)
       RETURNING p.id)
     SELECT GREATEST(0, extract(epoch FROM (cur.slot - clock_timestamp())) * 1000)::float8 AS wait_ms, EXISTS (SELECT 1 FROM took) AS taken FROM cur`,
    [spacingMs, Math.max(0, withinMs)],
  );
  return { taken: Boolean(row?.taken), waitMs: Number(row?.wait_ms ?? 0) };
}

/** What a claim on the window of provider sends is held to (domain/provider-pace.ts providerWindow). */
export type SendWindow = { cap: number; windowMs: number; pendingMs: number; pollMs: number };

/**
 * Claims a place for one provider request in the fleet's window of sends (migration 025): its id
 * and 0 when the request may go now, else null and how long until a place may free (ms).
 */
export async function claimProviderSend(db: Db, w: SendWindow): Promise<{ sendId: string | null; waitMs: number }> {
  const [row] = await db.query<{ send_id: string | null; wait_ms: number }>('SELECT send_id, wait_ms FROM provider_send_claim($1, $2, $3, $4)', [
    w.cap,
    w.windowMs,
    w.pendingMs,
    w.pollMs,
  ]);
  return { sendId: row?.send_id ?? null, waitMs: Number(row?.wait_ms ?? w.pollMs) };
}

/** Marks a claimed request as gone (stamped after it left, on the database's clock): it counts a window from now. */
export async function stampProviderSend(db: Db, sendId: string, windowMs: number): Promise<void> {
  await db.query(
    `UPDATE provider_sends SET sent_at = clock_timestamp(), counts_until = clock_timestamp() + make_interval(secs => $2::float8 / 1000)
      WHERE id = $1 AND sent_at IS NULL`,
    [sendId, windowMs],
  );
}

/** Gives a claimed place back, its request never sent (the attempt found it had no time left to send it). */
export async function releaseProviderSend(db: Db, sendId: string): Promise<void> {
  await db.query('DELETE FROM provider_sends WHERE id = $1 AND sent_at IS NULL', [sendId]);
}
