// The delivery log, redelivery, and the public keys that verify our signatures.
import { z } from 'zod';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { pageMeta, type Page } from '../domain/pagination.ts';
import { STANDARD_WEBHOOK_SCHEME, standardWebhookPublicKeySchema } from '../domain/standard-webhooks.ts';
import { publicKeySchema, SIGNATURE_SCHEME } from '../domain/webhook-signature.ts';
import type { DeliveryPage } from '../domain/webhooks.ts';
import type { EventFeed, EventFeedQuery } from '../domain/event-feed.ts';
import { requeueDeliveries } from '../store/deliveries.ts';
import { eventFeed } from '../store/event-feed.ts';
import { recordTestEvent } from '../store/events.ts';
import { deliveryLog, eventOfBusiness } from '../store/delivery-log.ts';
import { getSubscription } from '../store/subscriptions.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { subscriptionNotFound } from './subscriptions.ts';

/** POST /notification/{id}/test: the event sent, whose deliveries GET /events/{eventId}/deliveries shows. */
export const testEventSchema = z.object({ eventId: z.uuid(), subscriptionId: z.uuid() });

/** How many deliveries went back to the dispatcher. */
export const redeliverySchema = z.object({ redeliveries: z.number().int() });
type Redelivery = z.input<typeof redeliverySchema>;

/** GET /webhook-keys: the key rings of `vouch-signature` and `webhook-signature`. */
export const webhookKeysSchema = z.object({
  environment: z.string(),
  algorithm: z.literal(SIGNATURE_SCHEME),
  keys: z.array(publicKeySchema),
  standardWebhooks: z.object({ algorithm: z.literal(STANDARD_WEBHOOK_SCHEME), keys: z.array(standardWebhookPublicKeySchema) }),
});

const eventNotFound = (id: string) =>
  refuse('eventNotFound', `No event ${id} in your business; use the data.eventId of a webhook you received.`, { parameter: 'eventId' });

export async function subscriptionDeliveries({ db }: UseCaseContext, caller: Caller, subscriptionId: string, page: Page): Promise<Outcome<DeliveryPage>> {
  if (!(await getSubscription(db, caller.id, subscriptionId))) return subscriptionNotFound(subscriptionId);
  const { items, totalItems } = await deliveryLog(db, caller.id, { subscriptionId }, page);
  return done({ items, meta: pageMeta(page, totalItems) });
}

/** Every failed delivery of the subscription since the time goes back to the dispatcher. */
export async function redeliverSubscriptionFailures({ db }: UseCaseContext, caller: Caller, subscriptionId: string, since: Date): Promise<Outcome<Redelivery>> {
  if (!(await getSubscription(db, caller.id, subscriptionId))) return subscriptionNotFound(subscriptionId);
  const runs = await requeueDeliveries(db, caller.id, { subscriptionId, since });
  return done({ redeliveries: runs.length });
}

export async function eventDeliveries({ db }: UseCaseContext, caller: Caller, eventId: string, page: Page): Promise<Outcome<DeliveryPage>> {
  if (!(await eventOfBusiness(db, caller.id, eventId))) return eventNotFound(eventId);
  const { items, totalItems } = await deliveryLog(db, caller.id, { eventId }, page);
  return done({ items, meta: pageMeta(page, totalItems) });
}

/** The event again, same body and eventId, to each of its subscriptions that still exists. */
export async function redeliverEvent({ db }: UseCaseContext, caller: Caller, eventId: string): Promise<Outcome<Redelivery>> {
  if (!(await eventOfBusiness(db, caller.id, eventId))) return eventNotFound(eventId);
  const runs = await requeueDeliveries(db, caller.id, { eventId });
  return done({ redeliveries: runs.length });
}

/** The public keys of this environment's signing key rings, with their validity windows: `vouch-signature`'s and `webhook-signature`'s. */
export function webhookKeys({ config, keys }: UseCaseContext): Outcome<z.input<typeof webhookKeysSchema>> {
  return done({
    environment: config.environment,
    algorithm: SIGNATURE_SCHEME,
    keys: [...keys.webhooks],
    standardWebhooks: { algorithm: STANDARD_WEBHOOK_SCHEME, keys: [...keys.standardWebhooks] },
  });
}

/** A signed test event to the subscription alone, now (as every delivery: a disabled subscription holds it until enabled). */
export async function sendTestEvent({ db }: UseCaseContext, caller: Caller, subscriptionId: string): Promise<Outcome<z.input<typeof testEventSchema>>> {
  const eventId = await recordTestEvent(db, caller.id, subscriptionId, new Date());
  return eventId ? done({ eventId, subscriptionId }) : subscriptionNotFound(subscriptionId);
}

/** The business's events after a sequence, oldest first, with how each one's deliveries stand. */
export async function eventsFeed({ db }: UseCaseContext, caller: Caller, query: EventFeedQuery): Promise<Outcome<EventFeed>> {
  const { items, hasMore } = await eventFeed(db, caller.id, query.after, query.limit);
  return done({ items, meta: { limit: query.limit, after: query.after, lastSequence: items.at(-1)?.sequence ?? query.after, hasMore } });
}
