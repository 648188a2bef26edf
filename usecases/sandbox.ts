// The sandbox control (sandbox environment only): POST /sandbox/entity/{entityId}/kyc/complete plays
// the end user and the reviewer at the provider's sandbox through a workflow; the decision then
// takes the real path (provider callback → person's verification workflow → webhook).
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { SANDBOX_APPLICANT_EXISTS_FAILURE } from '../contract/workflows.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import type { SandboxReviewRequest } from '../domain/sandbox.ts';
import { insertSandboxReview } from '../store/sandbox-reviews.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { personNamed } from './person-verification.ts';

export type SandboxReviewAnswer = { entityId: string; applicantId: string; reviewAnswer: 'GREEN' | 'RED'; applicantCreated: boolean; message: string };

export async function completeSandboxKyc(ctx: UseCaseContext, caller: Caller, entityId: string, memberId: string | undefined, request: SandboxReviewRequest): Promise<Outcome<SandboxReviewAnswer>> {
  const person = await personNamed(ctx, caller, entityId, memberId, { requireWebhook: true });
  if (!person.ok) return person;
  const requestId = await insertSandboxReview(ctx.db, { businessId: caller.id, entityId: person.value, request });
  try {
    const result = await ctx.start.sandboxReview(requestId, { businessId: caller.id, entityId: person.value }, request.person !== undefined);
    return done({
      entityId: person.value,
      applicantId: result.applicantId,
      reviewAnswer: request.reviewAnswer,
      applicantCreated: result.created,
      message: 'The sandbox reviewer finished the review; the decision follows by account_status_change webhook.',
    });
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const cause = err.cause instanceof ActivityFailure ? err.cause.cause : err.cause;
    if (cause instanceof ApplicationFailure && cause.type === SANDBOX_APPLICANT_EXISTS_FAILURE) return refuse('sandboxApplicantExists', cause.message ?? '', { parameter: 'person' });
    ctx.log.warn({ err, entityId: person.value }, 'sandbox review not played');
    if (cause instanceof ApplicationFailure && cause.nonRetryable) return refuse('providerRefused', 'The identity provider sandbox refused the request; contact support.');
    return refuse('providerUnavailable', 'The identity provider sandbox did not answer; retry in a moment.');
  }
}
