// The webhook prerequisite (interface 1.4; DESIGN.md section 4): a decision is delivered only by
// webhook, so an operation that ends in one needs a subscription for the decision's event type
// first. One rule for every such operation (the hosted SDK token, universal KYC, the sandbox's
// review, the KYB submission); a person's decision and a business's each keep their own catalogue
// entry, so the code a client gets (0707000100, 0709000500) is the one it got before.
import type { ErrorName } from './errors.ts';
import { CARD_ISSUANCE_EVENT } from './events.ts';
import { KYB_EVENT } from './kyb.ts';
import { refuse, type Refusal } from './outcome.ts';

/** Whose decision an operation waits for: its event type, its catalogue entry, and how the refusal names it. */
export const WEBHOOK_PREREQUISITES = {
  person: { eventType: CARD_ISSUANCE_EVENT.eventType, error: 'webhookRegistrationRequired', decision: 'The decision' },
  business: { eventType: KYB_EVENT.eventType, error: 'kybWebhookRegistrationRequired', decision: 'The KYB decision' },
} as const satisfies Record<string, { eventType: string; error: ErrorName; decision: string }>;

export type DecisionDelivered = keyof typeof WEBHOOK_PREREQUISITES;

/**
 * The prerequisite, decided from the event types the business's subscriptions take (as the store
 * reports them): null when one of them is the decision's event type, else the refusal to answer.
 */
export function webhookPrerequisite(of: DecisionDelivered, subscribedTypes: readonly string[]): Refusal | null {
  const { eventType, error, decision } = WEBHOOK_PREREQUISITES[of];
  if (subscribedTypes.includes(eventType)) return null;
  return refuse(error, `${decision} is delivered only by webhook: register a subscription for ${eventType} with POST /notification first.`);
}
