// Names and message types shared by the API, the worker and the workflows: workflow ids, inputs,
// results, failure types. Node-free and zod-free (workflows import it; it imports only types).
import type { ImportErrorCategory } from '../domain/import-errors.ts';

/** One shared record: a batch row or a sync request. Workflows pass only this, never its data. */
export type ShareRef = { kind: 'batch'; batchId: string; rowNumber: number } | { kind: 'sync'; requestId: string };

/**
 * The Temporal Schedule that runs housekeeping; created or updated when a worker starts. One run an
 * hour, each making a pass every minute (the reconciler's cadence): 24 runs a day in an operator's
 * list instead of 1,440.
 */
export const HOUSEKEEPING_SCHEDULE_ID = 'vouch-housekeeping';
export const HOUSEKEEPING_INTERVAL = '1 hour' as const;
export type HousekeepingInput = { passes: number; everyMs: number };
export const HOUSEKEEPING_RUN: HousekeepingInput = { passes: 60, everyMs: 60_000 };

/** One workflow per run of a batch: the upload's, then one per retry of its failed rows. */
export const batchWorkflowId = (batchId: string, run = 1) => (run === 1 ? `batch-import-${batchId}` : `batch-import-${batchId}-retry-${run - 1}`);
export const syncWorkflowId = (requestId: string) => `sync-import-${requestId}`;

export type BatchImportInput = {
  batchId: string;
  /** The uploading business: its provider calls' fairness key (absent in runs started before it was added). */
  businessId?: string;
  /** The rate-limited queue of provider activities (workflows cannot read configuration). */
  providerTaskQueue: string;
  /** Records in flight at once. */
  concurrency: number;
  /** Rows per run before continuing as new. */
  pageSize: number;
  /** Retry of each provider call: attempts, and the first backoff (doubling up to a minute). */
  providerRetry: { maximumAttempts: number; initialIntervalMs: number };
  /** Last row number handled by earlier runs of this chain (continue-as-new). */
  cursor?: number;
};

export type SyncImportInput = {
  requestId: string;
  /** The calling business: its provider calls' fairness key (absent in runs started before it was added). */
  businessId?: string;
  /** The provider queue, shared with batches (its calls go first: PROVIDER_PRIORITY). */
  providerTaskQueue: string;
};

export type SyncImportResult = { outcome: 'succeeded' } | { outcome: 'failed'; category: ImportErrorCategory };

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

/**
 * The retry workflow of a delivery whose attempt failed, per run of the delivery (a redelivery is a
 * new run). Deliveries that succeed at once never have one.
 */
export const webhookRetryWorkflowId = (deliveryId: string, run: number) => `webhook-retry-${deliveryId}-run-${run}`;
export type WebhookRetryInput = { deliveryId: string };

/** One dispatcher workflow per webhook task queue, always running; the reconciler restarts it if it is gone. */
export const webhookDispatcherWorkflowId = (taskQueue: string) => `webhook-dispatcher-${taskQueue}`;
export type WebhookDispatcherInput = {
  /** Dispatcher activities running at once (each claims and sends deliveries concurrently). */
  dispatchers: number;
  /** How long one dispatcher activity runs before it returns and the workflow starts the next. */
  runForMs: number;
};

/**
 * Provider calls of sync imports and batches share one task queue and its fleet-wide rate limit;
 * a waiting caller goes first (Temporal task queue priority: lower runs sooner).
 */
export const PROVIDER_PRIORITY = { sync: 1, batch: 4 } as const;

/**
 * A provider call's place on the shared queue: a waiting caller before a batch (PROVIDER_PRIORITY),
 * and within each, the businesses with calls waiting served in turn — the business is the call's
 * fairness key (Temporal task queue fairness), so one business's large batch never holds another's
 * small one back. Runs started before the key existed have none (first come, first served).
 */
export function providerPriority(kind: keyof typeof PROVIDER_PRIORITY, businessId: string | undefined) {
  return { priorityKey: PROVIDER_PRIORITY[kind], ...(businessId ? { fairnessKey: businessId } : {}) };
}

/** ApplicationFailure type of recoverShare's "not listed yet": retried, RECOVER_LOOKUP_MAX_ATTEMPTS lookups at most. */
export const LOOKUP_PENDING_FAILURE = 'LookupPending';
/** Lookups of an applicant after "token already used" (1 + 2 + 4 + 8 + 16 s of backoff: about 30 s). */
export const RECOVER_LOOKUP_MAX_ATTEMPTS = 6;

/**
 * One verification workflow per person (an INDIVIDUAL entity) verified through the provider's
 * hosted SDK: it mints SDK tokens (update `sdkToken`) and decides each review the provider calls
 * back about (signal `applicantReviewed`), for as long as the person is being verified.
 */
export const personVerificationWorkflowId = (entityId: string) => `person-verification-${entityId}`;
export const SDK_TOKEN_UPDATE = 'sdkToken';
export const APPLICANT_REVIEWED_SIGNAL = 'applicantReviewed';
/** Query `progress`: reviews waiting, one being decided, reviews decided (for operators in the Temporal UI, and tests). */
export const PERSON_PROGRESS_QUERY = 'progress';
export type PersonProgress = { waiting: number; deciding: boolean; decided: number };
/** The applicant's externalUserId at the provider for a person verified through the SDK. */
export const sdkUserId = (entityId: string) => `person:${entityId}`;
/** The person an SDK applicant's externalUserId names, or null when it is not one of ours. */
export const entityOfSdkUserId = (externalUserId: string): string | null =>
  /^person:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(externalUserId) ? externalUserId.slice('person:'.length).toLowerCase() : null;

export type PersonVerificationInput = {
  entityId: string;
  /** The person's business: its provider calls' fairness key (absent in runs started before it was added). */
  businessId?: string;
  providerTaskQueue: string;
  /** The workflow ends after this long without a token request or a review (a later one starts it again). */
  idleMs: number;
  /** Reviews already decided by earlier runs of this chain (continue-as-new). */
  decided?: number;
};
export type SdkToken = { provider: string; sdkToken: string };
/** A review callback: which applicant (the workflow reads the applicant itself; no personal data here). */
export type ApplicantReviewed = { applicantId: string };
/** What deciding one review did (no personal data). */
export type ReviewOutcome =
  | { outcome: 'decided'; eventId: string; status: 'APPROVED' | 'REJECTED' }
  | { outcome: 'unchanged' }
  | { outcome: 'not-reviewed' }
  | { outcome: 'ignored'; reason: string };

/**
 * A sandbox control request (POST /sandbox/entity/{id}/kyc/complete): plays the end user (creates
 * the applicant under the person's SDK user id, with its identity document) and the reviewer
 * (testCompleted), so the provider's real callback reaches the person's verification workflow.
 */
export const sandboxReviewWorkflowId = (requestId: string) => `sandbox-review-${requestId}`;
export type SandboxReviewInput = {
  requestId: string;
  entityId: string;
  providerTaskQueue: string;
  withPerson: boolean;
  /** The business: its provider calls' fairness key (absent in runs started before it was added). */
  businessId?: string;
};
export type SandboxReviewResult = { applicantId: string; created: boolean };
/** The failure type when a request names a test person but the person's applicant already exists. */
export const SANDBOX_APPLICANT_EXISTS_FAILURE = 'SandboxApplicantExists';

/**
 * One workflow per universal KYC submission: it waits, durably, until the submission has its KYC
 * data and an identity document file (signal `ukycPartReceived` wakes it to look) or until its
 * deadline, then settles it — decided, or decided as incomplete.
 */
export const universalKycWorkflowId = (submissionId: string) => `universal-kyc-${submissionId}`;
export const UKYC_PART_RECEIVED_SIGNAL = 'ukycPartReceived';
/** Which part arrived (the workflow reads the submission itself; no personal data here). */
export type UkycPartReceived = { part: 'data' | 'file' };
export type UniversalKycInput = { submissionId: string; entityId: string; deadlineAt: string };
export const UKYC_PROGRESS_QUERY = 'progress';
export type UkycProgress = { stage: 'waiting' | 'settling' | 'settled'; deadlineAt: string; wakeUps: number };

/**
 * One workflow per universal KYB submission: it waits, durably, until every owner declared at
 * submission has a KYC decision (signal `kybOwnerDecided` wakes it to look; it also looks again
 * every KYB_RECHECK_MS in case a signal was lost) or until its deadline, then settles it once.
 * A change to the profile supersedes a waiting submission: its workflow ends without a decision.
 */
export const universalKybWorkflowId = (submissionId: string) => `universal-kyb-${submissionId}`;
export const KYB_OWNER_DECIDED_SIGNAL = 'kybOwnerDecided';
/** Which owner was decided, or that the profile changed (the workflow reads the state itself; ids only). */
export type KybWake = { reason: 'submitted' } | { reason: 'owner-decided'; ownerEntityId: string } | { reason: 'profile-changed' } | { reason: 'reconciled' };
export type UniversalKybInput = { submissionId: string; entityId: string; deadlineAt: string };
export const KYB_PROGRESS_QUERY = 'progress';
export type KybProgress = { stage: 'waiting' | 'settling' | 'settled' | 'ended'; deadlineAt: string; owners: number; ownersDecided: number; wakeUps: number };
/** How often a waiting KYB submission looks again without being woken. */
export const KYB_RECHECK_MS = 5 * 60_000;

/**
 * Search attributes on every workflow (all Keyword), registered by the development server at start
 * and on a real cluster by `npm run vouch -- temporal-setup` (README, "Operating Vouch"): so
 * `BusinessId='…' AND VouchStatus='failed'` finds runs in the CLI and the UI. Ids only: never a
 * name, a date of birth or a token.
 */
export const SEARCH_ATTRIBUTE_KEYS = {
  businessId: { name: 'BusinessId', type: 'KEYWORD' },
  batchId: { name: 'BatchId', type: 'KEYWORD' },
  entityId: { name: 'EntityId', type: 'KEYWORD' },
  vouchStatus: { name: 'VouchStatus', type: 'KEYWORD' },
} as const satisfies Record<string, { name: string; type: 'KEYWORD' }>; // the SDK's SearchAttributeKey, structurally

/** What a workflow run is about: set when it starts (and carried across continue-as-new). */
export type RunTags = { businessId: string; entityId?: string | undefined; batchId?: string | undefined };

/**
 * Each long workflow's stage in VouchStatus (README, "What each VouchStatus means"):
 *   batch import          pending → in_progress → completed | failed | canceled
 *   sync import           in_progress → completed | failed
 *   person verification   waiting → deciding → approved | rejected (the latest decision; then waiting again for a new review)
 *   sandbox review        in_progress → completed | failed
 *   universal KYC         waiting → settling → approved | rejected | expired (decided at its deadline without a document)
 *   universal KYB         waiting → settling → approved | rejected | superseded
 *   webhook retry         retrying → delivered | failed | canceled
 *   webhook dispatcher    running
 */
export const VOUCH_STATUSES = [
  'pending', 'in_progress', 'completed', 'failed', 'canceled',
  'waiting', 'deciding', 'settling', 'approved', 'rejected', 'expired', 'superseded',
  'retrying', 'delivered', 'running',
] as const;
export type VouchStatus = (typeof VOUCH_STATUSES)[number];
/** The patch that marks histories whose workflows keep VouchStatus current (older ones replay without it). */
export const VOUCH_STATUS_PATCH = 'vouch-status-search-attribute';
