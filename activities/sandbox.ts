// Activities of the sandbox control, on the provider queue (one provider request each): find the
// person's applicant, create it as the end user would, add its identity document, and finish its
// review as the sandbox reviewer. The test person is read from PostgreSQL, never passed through
// the workflow.
import { ApplicationFailure } from '@temporalio/common';
import { sdkUserId } from '../contract/person-verification.ts';
import { SANDBOX_REQUEST_GONE_FAILURE } from '../contract/sandbox-review.ts';
import { sandboxApplicant } from '../domain/sandbox.ts';
import { ProviderError } from '../provider/errors.ts';
import type { IdentityProvider } from '../provider/types.ts';
import type { Db } from '../store/db.ts';
import { loadSandboxReview } from '../store/sandbox-reviews.ts';
import { providerCall, toActivityFailure } from './provider.ts';

export function createSandboxActivities(deps: { db: Db; provider: IdentityProvider; defaultLevel: string }) {
  const { db, provider } = deps;
  const request = async (requestId: string) => {
    const r = await loadSandboxReview(db, requestId);
    if (!r) throw ApplicationFailure.nonRetryable(`no sandbox request ${requestId}`, SANDBOX_REQUEST_GONE_FAILURE);
    return r;
  };
  return {
    async findSandboxApplicant(input: { entityId: string }): Promise<string | null> {
      const found = await providerCall(() => provider.findApplicantByExternalUserId(sdkUserId(input.entityId)));
      return found?.id ?? null;
    },

    /** Null when the applicant exists already (created by an earlier attempt whose answer was lost, or by the SDK). */
    async createSandboxApplicant(input: { requestId: string }): Promise<string | null> {
      const { entityId, request: r } = await request(input.requestId);
      const { person } = sandboxApplicant(r.person, entityId, new Date());
      try {
        return (await provider.createApplicant({ externalUserId: sdkUserId(entityId), levelName: deps.defaultLevel, person })).id;
      } catch (err) {
        if (err instanceof ProviderError && err.status === 409) return null;
        throw toActivityFailure(err);
      }
    },

    async addSandboxIdDocument(input: { requestId: string; applicantId: string }): Promise<void> {
      const { entityId, request: r } = await request(input.requestId);
      const { idDocument } = sandboxApplicant(r.person, entityId, new Date());
      if (idDocument) await providerCall(() => provider.addIdDocument(input.applicantId, idDocument));
    },

    async completeSandboxReview(input: { requestId: string; applicantId: string }): Promise<void> {
      const { request: r } = await request(input.requestId);
      const review = {
        reviewAnswer: r.reviewAnswer,
        ...(r.rejectLabels ? { rejectLabels: r.rejectLabels } : {}),
        ...(r.reviewAnswer === 'RED' ? { reviewRejectType: r.reviewRejectType ?? 'RETRY' } : {}),
        ...(r.moderationComment ? { moderationComment: r.moderationComment } : {}),
      };
      await providerCall(() => provider.completeSandboxReview(input.applicantId, review));
    },
  };
}
