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

/** A subscription as the prerequisite sees it: the event types it takes, and whether it is disabled. */
export type SubscribedTypes = { id: string; types: readonly string[]; disabled: boolean };

/**
 * The prerequisite, decided from the business's subscriptions (as the store reports them): null when
 * one that is not disabled takes the decision's event type, else the refusal to answer. A disabled
 * subscription delivers nothing until it is enabled (its deliveries are held), so it meets nothing:
 * the refusal names it and how to enable it.
 */
export function webhookPrerequisite(of: DecisionDelivered, subscriptions: readonly SubscribedTypes[]): Refusal | null {
  const { eventType, error, decision } = WEBHOOK_PREREQUISITES[of];
  const taking = subscriptions.filter((s) => s.types.includes(eventType));
  if (taking.some((s) => !s.disabled)) return null;
  const disabled = taking.map((s) => s.id).sort();
  if (disabled.length > 0)
    return refuse(
      error,
      `${decision} is delivered only by webhook, and your subscription for ${eventType} (${disabled.join(', ')}) is disabled ` +
        '(it failed for days, or its receiver answered 410 Gone): ' +
        `fix its receiver, then enable it with POST /notification/${disabled[0]}/enable (or register another with POST /notification).`,
    );
  return refuse(error, `${decision} is delivered only by webhook: register a subscription for ${eventType} with POST /notification first.`);
}
