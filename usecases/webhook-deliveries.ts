// The delivery log, redelivery, and the public keys that verify our signatures.
import { done, refuse } from '../domain/outcome.ts';
import { pageMeta, type Page } from '../domain/pagination.ts';
import { STANDARD_WEBHOOK_SCHEME, standardWebhookPublicKeyOf } from '../domain/standard-webhooks.ts';
import { publicKeyOf, SIGNATURE_SCHEME } from '../domain/webhook-signature.ts';
import { requeueDeliveries } from '../store/deliveries.ts';
import { deliveryLog, eventOfBusiness } from '../store/delivery-log.ts';
import { getSubscription } from '../store/subscriptions.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { subscriptionNotFound } from './subscriptions.ts';

const eventNotFound = (id: string) => refuse('eventNotFound', `No event ${id} in your business; use the data.eventId of a webhook you received.`, { parameter: 'eventId' });

export async function subscriptionDeliveries({ db }: UseCaseContext, caller: Caller, subscriptionId: string, page: Page) {
  if (!(await getSubscription(db, caller.id, subscriptionId))) return subscriptionNotFound(subscriptionId);
  const { items, totalItems } = await deliveryLog(db, caller.id, { subscriptionId }, page);
  return done({ items, meta: pageMeta(page, totalItems) });
}

/** Every failed delivery of the subscription since the time goes back to the dispatcher. */
export async function redeliverSubscriptionFailures({ db }: UseCaseContext, caller: Caller, subscriptionId: string, since: Date) {
  if (!(await getSubscription(db, caller.id, subscriptionId))) return subscriptionNotFound(subscriptionId);
  const runs = await requeueDeliveries(db, caller.id, { subscriptionId, since });
  return done({ redeliveries: runs.length });
}

export async function eventDeliveries({ db }: UseCaseContext, caller: Caller, eventId: string, page: Page) {
  if (!(await eventOfBusiness(db, caller.id, eventId))) return eventNotFound(eventId);
  const { items, totalItems } = await deliveryLog(db, caller.id, { eventId }, page);
  return done({ items, meta: pageMeta(page, totalItems) });
}

/** The event again, same body and eventId, to each of its subscriptions that still exists. */
export async function redeliverEvent({ db }: UseCaseContext, caller: Caller, eventId: string) {
  if (!(await eventOfBusiness(db, caller.id, eventId))) return eventNotFound(eventId);
  const runs = await requeueDeliveries(db, caller.id, { eventId });
  return done({ redeliveries: runs.length });
}

/** The public keys of this environment's signing key rings, with their validity windows: `vouch-signature`'s and `webhook-signature`'s. */
export function webhookKeys({ config, keys }: UseCaseContext) {
  return done({
    environment: config.environment,
    algorithm: SIGNATURE_SCHEME,
    keys: keys.webhooks.map(publicKeyOf),
    standardWebhooks: { algorithm: STANDARD_WEBHOOK_SCHEME, keys: keys.standardWebhooks.map(standardWebhookPublicKeyOf) },
  });
}
