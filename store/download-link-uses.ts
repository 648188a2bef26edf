// How many times each download link has been used (DOWNLOAD_LINK_MAX_USES): a row per link used,
// by the SHA-256 of its token, until the link expires.
import type { Db } from './db.ts';

/** Counts one more use of the link; how many it has had, this one included. One statement, so uses at once each get their own number. */
export async function countDownloadLinkUse(db: Db, linkId: string, expiresAt: Date): Promise<number> {
  const [row] = await db.query<{ uses: number }>(
    `INSERT INTO download_link_uses (link_id, uses, expires_at) VALUES ($1, 1, $2)
     ON CONFLICT (link_id) DO UPDATE SET uses = download_link_uses.uses + 1
     RETURNING uses`,
    [linkId, expiresAt],
  );
  return Number(row!.uses);
}

/** Deletes the counts of links expired before `now` (no use of them is served any more); how many went. */
export async function purgeExpiredLinkUses(db: Db, now: Date): Promise<number> {
  const [row] = await db.query<{ n: string }>(
    'WITH gone AS (DELETE FROM download_link_uses WHERE expires_at < $1 RETURNING 1) SELECT count(*) AS n FROM gone',
    [now],
  );
  return Number(row?.n ?? 0);
}
