// The housekeeping workflow (workflows/housekeeping.ts) and the Temporal Schedule that runs it.

/**
 * The Temporal Schedule that runs housekeeping; created or updated when a worker starts. One run an
 * hour, each making a pass every minute (the reconciler's cadence): 24 runs a day in an operator's
 * list instead of 1,440.
 */
export const HOUSEKEEPING_SCHEDULE_ID = 'vouch-housekeeping';
export const HOUSEKEEPING_INTERVAL = '1 hour' as const;
export type HousekeepingInput = { passes: number; everyMs: number };
export const HOUSEKEEPING_RUN: HousekeepingInput = { passes: 60, everyMs: 60_000 };
