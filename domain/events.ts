// Webhook event payloads (interface 2.10 and 6).
import type { Decision } from './reliance.ts';

export const EVENT_TYPES = ['account_status_change', 'kyb_status_change', 'verification_status_change', 'feature_access_change', 'new_feature', 'reminder'] as const;

export const CARD_ISSUANCE_EVENT = { eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change' } as const;

export function cardIssuanceEvent(input: { eventId: string; entityId: string; timestamp: string; decision: Decision }) {
  const { decision } = input;
  const data: Record<string, unknown> = {
    eventId: input.eventId,
    message:
      decision.status === 'APPROVED'
        ? 'The cardholder was onboarded from shared verification data and may proceed to card creation.'
        : 'The cardholder could not be onboarded from the shared verification data.',
    entityId: input.entityId,
    timestamp: input.timestamp,
    status: decision.status,
  };
  if (decision.status === 'REJECTED') {
    data.moderationComment = decision.moderationComment;
    data.rejectLabels = decision.rejectLabels;
    data.reviewRejectType = decision.reviewRejectType;
  }
  return { ...CARD_ISSUANCE_EVENT, data };
}
