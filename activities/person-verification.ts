// Activities of the hosted-SDK path, on the provider queue (one provider request each, inside the
// fleet-wide provider limit): mint an SDK token for a person, and decide a review the provider
// called back about. Personal data is read and stored here; the workflow sees only ids and outcomes.
import { entityOfSdkUserId, sdkUserId, type ApplicantReviewed, type ReviewOutcome, type SdkToken } from '../contract/person-verification.ts';
import { decideProviderReview, SDK_TOKEN_TTL_SECONDS } from '../domain/hosted-sdk.ts';
import { verifiedPersonOf } from '../domain/verified-person.ts';
import { ProviderError } from '../provider/errors.ts';
import type { IdentityProvider } from '../provider/types.ts';
import type { Db } from '../store/db.ts';
import { recordReviewDecision } from '../onboarding/person-verifications.ts';
import { keepPersonData } from '../store/verified-persons.ts';
import { providerCall, toActivityFailure } from './provider.ts';

export function createPersonVerificationActivities(deps: {
  db: Db;
  provider: IdentityProvider;
  defaultLevel: string;
  personDecided?: (entityId: string) => Promise<void>;
}) {
  const { db, provider } = deps;
  return {
    async createSdkToken(input: { entityId: string }): Promise<SdkToken> {
      const minted = await providerCall(() =>
        provider.createSdkToken({ userId: sdkUserId(input.entityId), levelName: deps.defaultLevel, ttlInSecs: SDK_TOKEN_TTL_SECONDS }),
      );
      return { provider: provider.name, sdkToken: minted.token };
    },

    async decidePersonReview(input: { entityId: string } & ApplicantReviewed): Promise<ReviewOutcome> {
      let applicant;
      try {
        applicant = await provider.getApplicant(input.applicantId);
      } catch (err) {
        // an applicant id that is not ours (a misrouted callback) decides nothing
        if (err instanceof ProviderError && err.kind === 'not_found') return { outcome: 'ignored', reason: 'no such applicant' };
        throw toActivityFailure(err);
      }
      if (entityOfSdkUserId(applicant.externalUserId ?? '') !== input.entityId) return { outcome: 'ignored', reason: 'the applicant belongs to someone else' };
      const decision = decideProviderReview(applicant, new Date());
      if (!decision) return { outcome: 'not-reviewed' };
      if (!(await keepPersonData(db, input.entityId, provider.name, applicant.id, verifiedPersonOf(applicant))))
        return { outcome: 'ignored', reason: 'the entity was deleted' };
      const recorded = await recordReviewDecision(db, {
        entityId: input.entityId,
        provider: provider.name,
        applicantId: applicant.id,
        levelName: applicant.levelName,
        reviewKey: applicant.review.id ?? `${applicant.review.answer}`,
        decision,
        path: 'hosted-sdk',
        now: new Date(),
      });
      if (recorded.outcome === 'entity-gone') return { outcome: 'ignored', reason: 'the entity was deleted' };
      if (recorded.outcome === 'unchanged') return { outcome: 'unchanged' };
      await deps.personDecided?.(input.entityId);
      return { outcome: 'decided', eventId: recorded.eventId, status: decision.status };
    },
  };
}
