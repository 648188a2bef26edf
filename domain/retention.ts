// Retention of an ended relationship's record (issue 21). AML law asks for the customer-due-
// diligence record to be kept five years after the relationship ends (EU AMLR 2024/1624 art. 77,
// UK MLR 2017 reg. 40, US 31 CFR 1020.220), then deleted; the spec's DELETE /entity removes a
// person at once. A business's policy chooses: none (the spec, the default) or N years. Legal holds
// postpone a purge. Pure rules, no I/O: when a sealed record may go.

export const MAX_RETENTION_YEARS = 100;

/** A business's retention policy: null is none (DELETE removes every piece at once). */
export type RetentionPolicy = { years: number } | null;

/** When a record sealed at `sealedAt` under `years` may be purged (calendar years, UTC; 29 Feb → 28 Feb). */
export function purgeAfter(sealedAt: Date, years: number): Date {
  const d = new Date(sealedAt.getTime());
  const day = d.getUTCDate();
  d.setUTCFullYear(d.getUTCFullYear() + years);
  if (d.getUTCDate() !== day) d.setUTCDate(0); // rolled into March: the last day of February
  return d;
}

export type Hold = { id: string; until: Date | null; releasedAt: Date | null };

/** A hold that still binds at `now`: not released, and open-ended or not yet past its until. */
export const holdBinds = (h: Hold, now: Date): boolean => h.releasedAt === null && (h.until === null || h.until.getTime() > now.getTime());

/**
 * What to do with a sealed record at `now`: purge it, or look again at `at` (null: not before a hold
 * is released — the workflow then looks again at its next check anyway, so a lost signal delays at
 * most that long).
 */
export function retentionStep(sealedPurgeAfter: Date, holds: readonly Hold[], now: Date): { purge: true } | { purge: false; at: Date | null } {
  const binding = holds.filter((h) => holdBinds(h, now));
  if (binding.some((h) => h.until === null)) return { purge: false, at: null };
  const due = Math.max(sealedPurgeAfter.getTime(), ...binding.map((h) => h.until!.getTime()));
  return due <= now.getTime() ? { purge: true } : { purge: false, at: new Date(due) };
}
