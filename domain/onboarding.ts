// What an onboarding decision changes for the entity: the card-issuance feature on (APPROVED) or off
// (REJECTED: a renewal re-shares and re-decides), and the event that announces it (interface 2.10);
// the store announces a change of the feature (feature_access_change) and the verification's end.
// The store applies these in the onboarding transaction; the rule lives here.
import { CARD_ISSUANCE_EVENT, cardIssuanceEvent, type VerificationPath } from './events.ts';
import { features } from './feature-catalog.ts';
import { KYB_EVENT, kybEvent, type KybDecision } from './kyb.ts';
import type { Decision } from './reliance.ts';

const CARD_ISSUANCE_FEATURE = features.find((f) => f.slug === 'card-issuance-api-access')!;

export function onboardingChanges(decision: Decision, entityId: string, now: Date, path: VerificationPath = 'token-sharing') {
  return {
    feature: { ref: CARD_ISSUANCE_FEATURE, enabled: decision.status === 'APPROVED' },
    event: {
      ...CARD_ISSUANCE_EVENT,
      payload: (eventId: string) => cardIssuanceEvent({ eventId, entityId, timestamp: now.toISOString(), decision, path }),
    },
  };
}

const BUSINESS_CARD_PROGRAM_FEATURE = features.find((f) => f.slug === 'business-card-program')!;

/** What a KYB decision changes for the business entity: the business card program on or off, and its kyb_status_change event. */
export function kybOnboardingChanges(decision: KybDecision, entityId: string, submissionId: string, now: Date) {
  return {
    feature: { ref: BUSINESS_CARD_PROGRAM_FEATURE, enabled: decision.status === 'APPROVED' },
    event: {
      ...KYB_EVENT,
      payload: (eventId: string) => kybEvent({ eventId, entityId, submissionId, timestamp: now.toISOString(), decision }),
    },
  };
}
