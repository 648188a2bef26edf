// The person-verification workflow (workflows/person-verification.ts) and its messages: the API
// asks it for SDK tokens (update), tells it of the provider's review callbacks (signal), and
// operators read its progress (query). The definitions are the objects both sides use.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * One verification workflow per person (an INDIVIDUAL entity) verified through the provider's
 * hosted SDK: it mints SDK tokens (update `sdkToken`) and decides each review the provider calls
 * back about (signal `applicantReviewed`), for as long as the person is being verified.
 */
export const personVerificationWorkflowId = (entityId: string) => `person-verification-${entityId}`;

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
export type PersonVerificationResult = { decided: number };

export type SdkToken = { provider: string; sdkToken: string };
/** A review callback: which applicant (the workflow reads the applicant itself; no personal data here). */
export type ApplicantReviewed = { applicantId: string };
/** Reviews waiting, one being decided, reviews decided (for operators in the Temporal UI, and tests). */
export type PersonProgress = { waiting: number; deciding: boolean; decided: number };

/** Update `sdkToken`: mints an SDK token bound to the person (the caller waits for it). */
export const sdkTokenUpdate = defineUpdate<SdkToken>('sdkToken');
/** Signal `applicantReviewed`: the provider reviewed this applicant; decide it. */
export const applicantReviewedSignal = defineSignal<[ApplicantReviewed]>('applicantReviewed');
/** Query `progress`. */
export const personProgressQuery = defineQuery<PersonProgress>('progress');

/** What deciding one review did (no personal data). */
export type ReviewOutcome =
  | { outcome: 'decided'; eventId: string; status: 'APPROVED' | 'REJECTED' }
  | { outcome: 'unchanged' }
  | { outcome: 'not-reviewed' }
  | { outcome: 'ignored'; reason: string };

/** The applicant's externalUserId at the provider for a person verified through the SDK. */
export const sdkUserId = (entityId: string) => `person:${entityId}`;
/** The person an SDK applicant's externalUserId names, or null when it is not one of ours. */
export const entityOfSdkUserId = (externalUserId: string): string | null =>
  /^person:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(externalUserId) ? externalUserId.slice('person:'.length).toLowerCase() : null;
