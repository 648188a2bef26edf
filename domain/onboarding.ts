// What an onboarding decision changes for the entity: the card-issuance feature on (APPROVED) or off
// (REJECTED: a renewal re-shares and re-decides), and the event that announces it (interface 2.10).
// The store applies these in the onboarding transaction; the rule lives here.
import { CARD_ISSUANCE_EVENT, cardIssuanceEvent, type VerificationPath } from './events.ts';
import { features } from './feature-catalog.ts';
import type { Decision } from './reliance.ts';

const CARD_ISSUANCE_FEATURE_ID = features.find((f) => f.slug === 'card-issuance-api-access')!.id;

export function onboardingChanges(decision: Decision, entityId: string, now: Date, path: VerificationPath = 'token-sharing') {
  return {
    feature: { id: CARD_ISSUANCE_FEATURE_ID, enabled: decision.status === 'APPROVED' },
    event: {
      ...CARD_ISSUANCE_EVENT,
      payload: (eventId: string) => cardIssuanceEvent({ eventId, entityId, timestamp: now.toISOString(), decision, path }),
    },
  };
}
