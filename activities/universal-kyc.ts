// Activities of universal KYC, on the general queue (database work only: the client's provider
// already verified the person). The workflow asks whether a submission is complete and, once it is
// or its deadline has passed, settles it: the decision by the reliance rules, the person's data, the
// KYC account, requirement statuses and the decision event, in one transaction. Nothing personal
// goes back to the workflow.
import type { Db } from '../store/db.ts';
import { ukycVerificationKey } from '../domain/lifecycle-events.ts';
import { recordVerificationStage } from '../onboarding/lifecycle-events.ts';
import { loadSubmission } from '../store/universal-kyc.ts';
import { settleSubmissionIn, type UkycSettled } from '../onboarding/universal-kyc.ts';

export type UkycReadiness = { status: 'waiting' | 'decided' | 'expired' | 'gone'; complete: boolean };
export type { UkycSettled };

export function createUniversalKycActivities(deps: { db: Db; personDecided?: (entityId: string) => Promise<void> }) {
  const { db } = deps;
  return {
    async ukycReadiness(input: { submissionId: string }): Promise<UkycReadiness> {
      const s = await loadSubmission(db, input.submissionId);
      if (!s) return { status: 'gone', complete: false };
      const complete = s.data !== null && s.idDocuments > 0;
      if (s.status === 'waiting') {
        // the stage the client sees (verification_status_change), once each per submission
        const stage = complete ? 'IN_REVIEW' : 'WAITING_FOR_DOCUMENTS';
        await recordVerificationStage(db, {
          businessId: s.businessId,
          entityId: s.entityId,
          ref: { path: 'universal-kyc', verificationId: input.submissionId },
          stage,
          key: ukycVerificationKey(input.submissionId),
          now: new Date(),
        });
      }
      return { status: s.status, complete };
    },

    /** Decides a complete submission, or an incomplete one as such; a settled one stays as it is. */
    async settleUniversalKyc(input: { submissionId: string }): Promise<UkycSettled> {
      const { entityId, ...settled } = await settle(input);
      if (entityId) await deps.personDecided?.(entityId);
      return settled as UkycSettled;
    },
  };

  /** The settling transaction; the person decided is named for the hook, not returned to the workflow. */
  function settle(input: { submissionId: string }): Promise<UkycSettled & { entityId?: string }> {
    return db.tx((tx) => settleSubmissionIn(tx, input.submissionId));
  }
}
