// One shared record (a batch row or a sync request) as the batch-import and sync-import workflows
// pass it (workflows/share-record.ts), and how its failures travel from activity to workflow.
import type { ImportErrorCategory } from '../domain/import-errors.ts';

/** One shared record: a batch row or a sync request. Workflows pass only this, never its data. */
export type ShareRef = { kind: 'batch'; batchId: string; rowNumber: number } | { kind: 'sync'; requestId: string };

/**
 * How a record's provider failure travels from activity to workflow, classified once (by the
 * activity, domain/import-errors.ts): an ApplicationFailure whose type is this prefix and the
 * record-level category, e.g. `RecordFailure.TOKEN_EXPIRED_OR_INVALID`. The provider's own kind is
 * in the failure's details, for operators.
 */
export const RECORD_FAILURE_PREFIX = 'RecordFailure.';
export const recordFailureType = (category: ImportErrorCategory) => `${RECORD_FAILURE_PREFIX}${category}`;
/** The category a failure type carries; anything else (a timeout, a crash) is PROVIDER_UNAVAILABLE. */
export function categoryOfFailureType(type: string | undefined): ImportErrorCategory {
  return type?.startsWith(RECORD_FAILURE_PREFIX) ? (type.slice(RECORD_FAILURE_PREFIX.length) as ImportErrorCategory) : 'PROVIDER_UNAVAILABLE';
}

/** ApplicationFailure type of a failure that stops a whole run (our provider credentials refused). */
export const RUN_LEVEL_FAILURE = 'RunLevel';

/** ApplicationFailure type of recoverShare's "not listed yet": retried, RECOVER_LOOKUP_MAX_ATTEMPTS lookups at most. */
export const LOOKUP_PENDING_FAILURE = 'LookupPending';
/** Lookups of an applicant after "token already used" (1 + 2 + 4 + 8 + 16 s of backoff: about 30 s). */
export const RECOVER_LOOKUP_MAX_ATTEMPTS = 6;

/** ApplicationFailure type of an answer an activity must never give (a defect: the run fails, visibly, for an engineer). */
export const BUG_FAILURE = 'Bug';
