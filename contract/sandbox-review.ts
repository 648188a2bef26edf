// The sandbox-review workflow (workflows/sandbox-review.ts).

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
/** The failure type when the applicant could be neither created nor found at the provider. */
export const SANDBOX_APPLICANT_MISSING_FAILURE = 'SandboxApplicantMissing';
/** The failure type when the request's row is gone (its entity was deleted while the review was played). */
export const SANDBOX_REQUEST_GONE_FAILURE = 'SandboxRequestGone';
