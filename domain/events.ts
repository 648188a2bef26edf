// Webhook event payloads (interface 2.10 and 6).
import type { Decision } from './reliance.ts';

export const EVENT_TYPES = [
  'account_status_change',
  'kyb_status_change',
  'verification_status_change',
  'feature_access_change',
  'new_feature',
  'reminder',
] as const;

/**
 * POST /notification/{id}/test (issue 38, item 6): an event of its own name and type, delivered to that
 * subscription alone, whatever types it takes; it decides nothing (its delivery counts toward the subscription's health).
 */
export const TEST_EVENT = { eventName: 'webhook_test', eventType: 'test' } as const;

export function testEvent(input: { eventId: string; subscriptionId: string; timestamp: string }) {
  return {
    ...TEST_EVENT,
    data: {
      eventId: input.eventId,
      message:
        'A test event, sent on request (POST /notification/{notificationId}/test). It records no decision; ' +
        "its delivery counts toward the subscription's health like any other.",
      timestamp: input.timestamp,
      subscriptionId: input.subscriptionId,
    },
  };
}

export const CARD_ISSUANCE_EVENT = { eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change' } as const;

/** How a person was verified; the event's message says it. */
export type VerificationPath = 'token-sharing' | 'hosted-sdk' | 'universal-kyc';

const MESSAGES: Record<VerificationPath, Record<Decision['status'], string>> = {
  'token-sharing': {
    APPROVED: 'The cardholder was onboarded from shared verification data and may proceed to card creation.',
    REJECTED: 'The cardholder could not be onboarded from the shared verification data.',
  },
  'hosted-sdk': {
    APPROVED: 'The cardholder was verified through the hosted SDK and may proceed to card creation.',
    REJECTED: 'The cardholder could not be verified through the hosted SDK.',
  },
  'universal-kyc': {
    APPROVED: 'The cardholder was onboarded from the submitted KYC data and may proceed to card creation.',
    REJECTED: 'The cardholder could not be onboarded from the submitted KYC data.',
  },
};

/** Interface 2.10: a decision's data, with moderationComment, rejectLabels and reviewRejectType only when REJECTED. */
export function decisionData(base: Record<string, unknown>, decision: Decision): Record<string, unknown> {
  if (decision.status !== 'REJECTED') return base;
  return { ...base, moderationComment: decision.moderationComment, rejectLabels: decision.rejectLabels, reviewRejectType: decision.reviewRejectType };
}

export function cardIssuanceEvent(input: { eventId: string; entityId: string; timestamp: string; decision: Decision; path?: VerificationPath }) {
  const { decision } = input;
  const data = decisionData(
    {
      eventId: input.eventId,
      message: MESSAGES[input.path ?? 'token-sharing'][decision.status],
      entityId: input.entityId,
      timestamp: input.timestamp,
      status: decision.status,
    },
    decision,
  );
  return { ...CARD_ISSUANCE_EVENT, data };
}
