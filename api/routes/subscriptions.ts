// Webhook subscriptions (interface 2.6 and 4.2), the delivery log, redelivery, and the public keys
// that verify our signatures.
import { z } from 'zod';
import { paginationQuery } from '../../domain/pagination.ts';
import {
  deliveryPageSchema,
  MAX_SUBSCRIPTIONS,
  notificationIdParams,
  subscriptionBody,
  subscriptionPageSchema,
  subscriptionSchema,
} from '../../domain/webhooks.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { subscriptionSecretSchema } from '../../domain/subscription-secret.ts';
import { eventFeedQuery, eventFeedSchema } from '../../domain/event-feed.ts';
import {
  createSubscription,
  deleteSubscription,
  enableSubscription,
  getSubscription,
  getSubscriptionSecret,
  listSubscriptions,
  replaceSubscription,
  rotateSubscriptionSecret,
} from '../../usecases/subscriptions.ts';
import {
  eventDeliveries,
  eventsFeed,
  redeliverEvent,
  sendTestEvent,
  testEventSchema,
  redeliverSubscriptionFailures,
  redeliverySchema,
  subscriptionDeliveries,
  webhookKeys,
  webhookKeysSchema,
} from '../../usecases/webhook-deliveries.ts';
import { route } from '../route.ts';

/** The headers of an answer that carries a secret: never kept by a cache on the way. */
const NO_STORE = { 'Cache-Control': 'no-store' };

const eventIdParams = z.object({ eventId: z.uuid({ message: 'eventId must be a UUID' }) }).strict();

export function subscriptionRoutes(context: UseCaseContext) {
  return [
    route({
      method: 'post',
      path: '/notification',
      operationId: 'createSubscription',
      summary: 'Register a webhook endpoint',
      description:
        `HTTPS to a public address. At most ${MAX_SUBSCRIPTIONS} per business. The answer carries the subscription's own ` +
        '`secret` (whsec_…): every delivery to it is signed with it (`webhook-signature` v1, HMAC-SHA256, the Standard Webhooks form), ' +
        'so a Standard Webhooks or Svix library verifies it. No other read shows it but GET /notification/{notificationId}/secret.',
      tag: 'Webhooks',
      body: subscriptionBody,
      responses: {
        201: { description: 'The subscription, with its secret', schema: subscriptionSchema.extend({ secret: subscriptionSecretSchema.shape.secret }) },
      },
      errors: ['invalidRequest', 'malformedJson', 'unsupportedMediaType', 'webhookUrlRefused', 'subscriptionLimit'],
      handler: ({ body, business }) => createSubscription(context, business, body),
      present: (body) => ({ status: 201, body, headers: NO_STORE }),
    }),
    route({
      method: 'get',
      path: '/notification',
      operationId: 'listSubscriptions',
      summary: 'List webhook subscriptions',
      tag: 'Webhooks',
      versioned: true,
      query: paginationQuery,
      responses: { 200: { description: 'A page of subscriptions', schema: subscriptionPageSchema } },
      errors: ['invalidRequest', 'acceptVersionMissing', 'acceptVersionUnsupported'],
      handler: ({ query, business }) => listSubscriptions(context, business, query),
    }),
    route({
      method: 'get',
      path: '/notification/:notificationId',
      operationId: 'getSubscription',
      summary: 'Read one webhook subscription',
      tag: 'Webhooks',
      params: notificationIdParams,
      responses: { 200: { description: 'The subscription', schema: subscriptionSchema } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      handler: ({ params, business }) => getSubscription(context, business, params.notificationId),
    }),
    route({
      method: 'put',
      path: '/notification/:notificationId',
      operationId: 'replaceSubscription',
      summary: 'Replace a webhook subscription (channel, types, URL)',
      description:
        'Pending retries go to the new URL from their next attempt. A new URL for a failing or disabled subscription enables it ' +
        '(as POST /notification/{notificationId}/enable does): its waiting and held deliveries go to the new URL now.',
      tag: 'Webhooks',
      params: notificationIdParams,
      body: subscriptionBody,
      responses: { 200: { description: 'The updated subscription', schema: subscriptionSchema } },
      errors: ['invalidRequest', 'malformedJson', 'unsupportedMediaType', 'webhookUrlRefused', 'subscriptionNotFound'],
      handler: ({ params, body, business }) => replaceSubscription(context, business, params.notificationId, body),
    }),
    route({
      method: 'delete',
      path: '/notification/:notificationId',
      operationId: 'deleteSubscription',
      summary: 'Delete a webhook subscription',
      description: 'Delivery stops at once, pending retries included.',
      tag: 'Webhooks',
      params: notificationIdParams,
      responses: { 204: { description: 'Deleted' } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      handler: ({ params, business }) => deleteSubscription(context, business, params.notificationId),
    }),
    route({
      method: 'get',
      path: '/notification/:notificationId/secret',
      operationId: 'getSubscriptionSecret',
      summary: "The subscription's secret, which signs each delivery's v1 signature",
      description:
        '`webhook-signature` carries `v1,<Base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under this secret (the ' +
        'Standard Webhooks symmetric form) beside the environment-wide `v1a` (Ed25519). After a rotation the secret it replaced still ' +
        'signs too, a second `v1`, until `previousSecretExpiresAt`.',
      tag: 'Webhooks',
      params: notificationIdParams,
      responses: { 200: { description: 'The secret', schema: subscriptionSecretSchema } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      handler: ({ params, business }) => getSubscriptionSecret(context, business, params.notificationId),
      present: (body) => ({ status: 200, body, headers: NO_STORE }),
    }),
    route({
      method: 'post',
      path: '/notification/:notificationId/secret/rotate',
      operationId: 'rotateSubscriptionSecret',
      summary: "Replace the subscription's secret; the old one keeps signing for 24 hours",
      description:
        'From now on deliveries carry two `v1` signatures, one per secret, until `previousSecretExpiresAt` (24 hours): switch your ' +
        'receiver to the new secret meanwhile. Rotating again within those 24 hours ends the older secret at once. Limited with the ' +
        `redelivery requests (${context.settings.webhooks.redeliveriesPerSecond} per second per business).`,
      tag: 'Webhooks',
      rateLimit: { bucket: 'redeliver', perSecond: context.settings.webhooks.redeliveriesPerSecond },
      params: notificationIdParams,
      responses: { 200: { description: 'The new secret', schema: subscriptionSecretSchema } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      handler: ({ params, business }) => rotateSubscriptionSecret(context, business, params.notificationId),
      present: (body) => ({ status: 200, body, headers: NO_STORE }),
    }),
    route({
      method: 'get',
      path: '/notification/:notificationId/deliveries',
      operationId: 'listSubscriptionDeliveries',
      summary: "A subscription's deliveries and every attempt (newest first)",
      tag: 'Webhooks',
      params: notificationIdParams,
      query: paginationQuery,
      responses: { 200: { description: 'A page of deliveries', schema: deliveryPageSchema } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      handler: ({ params, query, business }) => subscriptionDeliveries(context, business, params.notificationId, query),
    }),
    route({
      method: 'post',
      path: '/notification/:notificationId/redeliver',
      operationId: 'redeliverSubscriptionFailures',
      summary: 'Redeliver every failed event of a subscription since a time',
      description:
        `Redelivery requests (this one and POST /events/{eventId}/redeliver) are limited to ` +
        `${context.settings.webhooks.redeliveriesPerSecond} per second per business ` +
        `(WEBHOOK_REDELIVERIES_PER_SECOND); redelivered events take their turn beside every other ` +
        `business's deliveries.`,
      tag: 'Webhooks',
      rateLimit: { bucket: 'redeliver', perSecond: context.settings.webhooks.redeliveriesPerSecond },
      params: notificationIdParams,
      body: z.object({ since: z.iso.datetime({ offset: true, message: 'since must be an ISO 8601 date-time' }) }).strict(),
      responses: { 202: { description: 'Redeliveries queued (the dispatcher sends them within moments)', schema: redeliverySchema } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      handler: ({ params, body, business }) => redeliverSubscriptionFailures(context, business, params.notificationId, new Date(body.since)),
    }),
    route({
      method: 'post',
      path: '/notification/:notificationId/enable',
      operationId: 'enableSubscription',
      summary: 'Turn a webhook subscription back on and send its waiting deliveries now',
      description:
        `A subscription whose every attempt fails for ${Math.round(context.settings.webhooks.disableAfterMs / 3_600_000)} hours ` +
        '(WEBHOOK_DISABLE_AFTER_MS) is disabled: nothing is sent to it and ' +
        'its pending deliveries are kept (`health.state` is `disabled`). This makes it healthy again and hands every delivery it ' +
        'holds, or that waits for a retry slot, to the dispatcher at once, at most ' +
        `${context.settings.webhooks.maxInFlightPerSubscription} in flight per dispatcher. Safe to repeat. Limited with the redelivery requests ` +
        `(${context.settings.webhooks.redeliveriesPerSecond} per second per business).`,
      tag: 'Webhooks',
      rateLimit: { bucket: 'redeliver', perSecond: context.settings.webhooks.redeliveriesPerSecond },
      params: notificationIdParams,
      responses: { 200: { description: 'The subscription, healthy', schema: subscriptionSchema } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      handler: ({ params, business }) => enableSubscription(context, business, params.notificationId),
    }),
    route({
      method: 'post',
      path: '/notification/:notificationId/test',
      operationId: 'sendTestEvent',
      summary: 'Send a signed test event to this subscription now',
      description:
        'Event type `test`, name `webhook_test`: delivered to this subscription alone, whatever types it takes, signed and retried like ' +
        'every delivery (a disabled subscription holds it until enabled). It decides nothing; its delivery counts toward the ' +
        "subscription's health like any other (a 410 disables it). Follow it with " +
        'GET /events/{eventId}/deliveries. Limited with the redelivery requests ' +
        `(${context.settings.webhooks.redeliveriesPerSecond} per second per business).`,
      tag: 'Webhooks',
      rateLimit: { bucket: 'redeliver', perSecond: context.settings.webhooks.redeliveriesPerSecond },
      params: notificationIdParams,
      responses: { 202: { description: 'The test event, queued (the dispatcher sends it within moments)', schema: testEventSchema } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      handler: ({ params, business }) => sendTestEvent(context, business, params.notificationId),
    }),
    route({
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: "The business's events, oldest first, by sequence (reconcile after an outage)",
      description:
        'Every event recorded for your business (decisions always; the lifecycle types while a subscription of yours takes them; test ' +
        'events), but those about an entity since deleted, ' +
        'in the order they became visible, each with its `sequence` — a number of your business that only grows and that every ' +
        'event body carries too — its payload as delivered, and how its deliveries stand. Page with `after`: the last sequence ' +
        'you have handled (meta.lastSequence); an event that becomes visible later always has a larger sequence than any you ' +
        'have read, so paging by `after` misses nothing. Keep `after` from the feed, not from webhook bodies (deliveries arrive in ' +
        'no particular order). Numbers may skip (an event about a deleted entity is not listed).',
      tag: 'Webhooks',
      versioned: true,
      query: eventFeedQuery,
      responses: { 200: { description: 'A page of events', schema: eventFeedSchema } },
      errors: ['invalidRequest', 'acceptVersionMissing', 'acceptVersionUnsupported'],
      handler: ({ query, business }) => eventsFeed(context, business, query),
    }),
    route({
      method: 'get',
      path: '/events/:eventId/deliveries',
      operationId: 'listEventDeliveries',
      summary: "An event's deliveries and every attempt",
      tag: 'Webhooks',
      params: eventIdParams,
      query: paginationQuery,
      responses: { 200: { description: 'A page of deliveries', schema: deliveryPageSchema } },
      errors: ['invalidRequest', 'eventNotFound'],
      handler: ({ params, query, business }) => eventDeliveries(context, business, params.eventId, query),
    }),
    route({
      method: 'post',
      path: '/events/:eventId/redeliver',
      operationId: 'redeliverEvent',
      summary: 'Deliver an event again to each of its subscriptions that still exists',
      description:
        `The same body and the same data.eventId as before: receivers deduplicate on it. At most ` +
        `${context.settings.webhooks.redeliveriesPerSecond} redelivery requests per second per business ` +
        `(WEBHOOK_REDELIVERIES_PER_SECOND).`,
      tag: 'Webhooks',
      rateLimit: { bucket: 'redeliver', perSecond: context.settings.webhooks.redeliveriesPerSecond },
      params: eventIdParams,
      responses: { 202: { description: 'Redeliveries queued (the dispatcher sends them within moments)', schema: redeliverySchema } },
      errors: ['invalidRequest', 'eventNotFound'],
      handler: ({ params, business }) => redeliverEvent(context, business, params.eventId),
    }),
    route({
      method: 'get',
      path: '/webhook-keys',
      operationId: 'webhookKeys',
      summary: 'Public keys that verify vouch-signature and webhook-signature, with their validity windows',
      description:
        "vouch-signature (the interface's, RSA-SHA512 over the raw body) is made with the key valid" +
        ' when the delivery is sent (its id is in vouch-signature-key-id). webhook-signature ' +
        '(Standard Webhooks, v1a: Ed25519 over webhook-id.webhook-timestamp.body) carries one ' +
        'signature per key valid at send time. Verify with any key of this environment.',
      tag: 'Webhooks',
      responses: { 200: { description: 'The key ring of this environment', schema: webhookKeysSchema } },
      handler: () => webhookKeys(context),
    }),
  ];
}
