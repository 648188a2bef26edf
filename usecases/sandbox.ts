// The sandbox control (sandbox environment only): POST /sandbox/entity/{entityId}/kyc/complete plays
// the end user and the reviewer at the provider's sandbox through a workflow; the decision then
// takes the real path (provider callback → person's verification workflow → webhook).
import { z } from 'zod';
import { SANDBOX_APPLICANT_EXISTS_FAILURE } from '../contract/sandbox-review.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import type { SandboxReviewRequest } from '../domain/sandbox.ts';
import { insertSandboxReview } from '../store/sandbox-reviews.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { personNamed } from './person-verification.ts';

export const sandboxReviewAnswerSchema = z.object({
  entityId: z.string(),
  applicantId: z.string(),
  reviewAnswer: z.enum(['GREEN', 'RED']),
  applicantCreated: z.boolean(),
  message: z.string(),
});
export type SandboxReviewAnswer = z.input<typeof sandboxReviewAnswerSchema>;

export async function completeSandboxKyc(
  context: UseCaseContext,
  caller: Caller,
  entityId: string,
  memberId: string | undefined,
  request: SandboxReviewRequest,
): Promise<Outcome<SandboxReviewAnswer>> {
  const person = await personNamed(context, caller, entityId, memberId, { requireWebhook: true });
  if (!person.ok) return person;
  const requestId = await insertSandboxReview(context.db, { businessId: caller.id, entityId: person.value, request });
  const played = await context.start.sandboxReview(requestId, { businessId: caller.id, entityId: person.value }, request.person !== undefined);
  if (played.ok) {
    return done({
      entityId: person.value,
      applicantId: played.value.applicantId,
      reviewAnswer: request.reviewAnswer,
      applicantCreated: played.value.created,
      message: 'The sandbox reviewer finished the review; the decision follows by account_status_change webhook.',
    });
  }
  const { failure } = played;
  if (failure.type === SANDBOX_APPLICANT_EXISTS_FAILURE) return refuse('sandboxApplicantExists', failure.message, { parameter: 'person' });
  context.log.warn({ err: played.error, entityId: person.value }, 'sandbox review not played');
  if (failure.nonRetryable) return refuse('providerRefused', 'The identity provider sandbox refused the request; contact support.');
  return refuse('providerUnavailable', 'The identity provider sandbox did not answer; retry in a moment.');
}
