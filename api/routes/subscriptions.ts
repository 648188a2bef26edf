// Webhook subscriptions (interface 2.6 and 4.2), the delivery log, redelivery, and the public keys
// that verify our signatures.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ApiError } from '../../domain/errors.ts';
import { pageMeta, pageMetaSchema, paginationQuery } from '../../domain/pagination.ts';
import { publicKeyOf, type SigningKey } from '../../domain/webhook-signature.ts';
import { MAX_SUBSCRIPTIONS, notificationIdParams, subscriptionBody, subscriptionSchema } from '../../domain/webhooks.ts';
import type { Config } from '../../runtime/config.ts';
import type { Db } from '../../store/db.ts';
import {
  createSubscription,
  deleteSubscription,
  deliveryLog,
  eventOfBusiness,
  getSubscription,
  listSubscriptions,
  replaceSubscription,
  requeueDeliveries,
  SubscriptionLimitReached,
  type Subscription,
} from '../../store/webhooks.ts';
import { webhookRetryWorkflowId } from '../../contract/workflows.ts';
import { route } from '../route.ts';
import { assertDeliverableUrl } from '../webhook-url-check.ts';

/** A subscription as interface 2.6 shows it. */
const present = (s: Subscription) => ({ id: s.id, channel: s.channel, types: s.types, config: { webhook: { url: s.url } }, createdAt: s.createdAt, updatedAt: s.updatedAt });

const notFound = (id: string) => new ApiError('subscriptionNotFound', `Webhook subscription ${id} not found.`, { parameter: 'notificationId' });

const attemptSchema = z.object({
  attempt: z.number().int(),
  at: z.string(),
  url: z.string(),
  keyId: z.string().nullable(),
  httpStatus: z.number().int().nullable(),
  latencyMs: z.number().int().nullable(),
  error: z.string().nullable(),
  succeeded: z.boolean(),
});
const deliverySchema = z.object({
  deliveryId: z.uuid(),
  eventId: z.uuid(),
  subscriptionId: z.uuid(),
  status: z.enum(['pending', 'delivered', 'failed', 'canceled']),
  attempts: z.array(attemptSchema),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
});
const deliveryPage = z.object({ items: z.array(deliverySchema), meta: pageMetaSchema() });
const eventIdParams = z.object({ eventId: z.uuid({ message: 'eventId must be a UUID' }) }).strict();
const redeliverySchema = z.object({ redeliveries: z.number().int() });

export function subscriptionRoutes(deps: { db: Db; temporal: Client; config: Config; log: Logger; keyRing: readonly SigningKey[] }) {
  const { db, temporal, config, log } = deps;
  const allowInsecure = config.webhooks.allowInsecureUrls;

  return [
    route({
      method: 'post',
      path: '/notification',
      operationId: 'createSubscription',
      summary: 'Register a webhook endpoint',
      description: `HTTPS to a public address. At most ${MAX_SUBSCRIPTIONS} per business.`,
      tag: 'Webhooks',
      body: subscriptionBody,
      responses: { 201: { description: 'The subscription', schema: subscriptionSchema } },
      errors: ['invalidRequest', 'malformedJson', 'unsupportedMediaType', 'webhookUrlRefused', 'subscriptionLimit'],
      async handler({ body, business }) {
        await assertDeliverableUrl(body.webhookUrl, allowInsecure);
        try {
          return { status: 201, body: present(await createSubscription(db, business.id, body)) };
        } catch (err) {
          if (err instanceof SubscriptionLimitReached) {
            throw new ApiError('subscriptionLimit', `Your business already has ${MAX_SUBSCRIPTIONS} webhook subscriptions; delete one before registering another.`);
          }
          throw err;
        }
      },
    }),
    route({
      method: 'get',
      path: '/notification',
      operationId: 'listSubscriptions',
      summary: 'List webhook subscriptions',
      tag: 'Webhooks',
      versioned: true,
      query: paginationQuery,
      responses: { 200: { description: 'A page of subscriptions', schema: z.object({ items: z.array(subscriptionSchema), meta: pageMetaSchema() }) } },
      errors: ['invalidRequest', 'acceptVersionMissing', 'acceptVersionUnsupported'],
      async handler({ query, business }) {
        const { items, totalItems } = await listSubscriptions(db, business.id, query);
        return { status: 200, body: { items: items.map(present), meta: pageMeta(query, totalItems) } };
      },
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
      async handler({ params, business }) {
        const s = await getSubscription(db, business.id, params.notificationId);
        if (!s) throw notFound(params.notificationId);
        return { status: 200, body: present(s) };
      },
    }),
    route({
      method: 'put',
      path: '/notification/:notificationId',
      operationId: 'replaceSubscription',
      summary: 'Replace a webhook subscription (channel, types, URL)',
      description: 'Pending retries go to the new URL from their next attempt.',
      tag: 'Webhooks',
      params: notificationIdParams,
      body: subscriptionBody,
      responses: { 200: { description: 'The updated subscription', schema: subscriptionSchema } },
      errors: ['invalidRequest', 'malformedJson', 'unsupportedMediaType', 'webhookUrlRefused', 'subscriptionNotFound'],
      async handler({ params, body, business }) {
        if (!(await getSubscription(db, business.id, params.notificationId))) throw notFound(params.notificationId);
        await assertDeliverableUrl(body.webhookUrl, allowInsecure);
        const s = await replaceSubscription(db, business.id, params.notificationId, body);
        if (!s) throw notFound(params.notificationId);
        return { status: 200, body: present(s) };
      },
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
      async handler({ params, business }) {
        const waiting = await deleteSubscription(db, business.id, params.notificationId);
        if (!waiting) throw notFound(params.notificationId);
        // The deliveries are canceled in PostgreSQL, which every attempt checks first; canceling
        // their retry workflows too just ends them now instead of at their next attempt.
        await Promise.all(
          waiting.map(({ deliveryId, run }) =>
            temporal.workflow
              .getHandle(webhookRetryWorkflowId(deliveryId, run))
              .cancel()
              .catch((err) => {
                if (!(err instanceof WorkflowNotFoundError)) log.warn({ err, deliveryId }, 'delivery canceled; its retry workflow ends at its next attempt instead');
              }),
          ),
        );
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/notification/:notificationId/deliveries',
      operationId: 'listSubscriptionDeliveries',
      summary: "A subscription's deliveries and every attempt (newest first)",
      tag: 'Webhooks',
      params: notificationIdParams,
      query: paginationQuery,
      responses: { 200: { description: 'A page of deliveries', schema: deliveryPage } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      async handler({ params, query, business }) {
        if (!(await getSubscription(db, business.id, params.notificationId))) throw notFound(params.notificationId);
        const { items, totalItems } = await deliveryLog(db, business.id, { subscriptionId: params.notificationId }, query);
        return { status: 200, body: { items, meta: pageMeta(query, totalItems) } };
      },
    }),
    route({
      method: 'post',
      path: '/notification/:notificationId/redeliver',
      operationId: 'redeliverSubscriptionFailures',
      summary: 'Redeliver every failed event of a subscription since a time',
      tag: 'Webhooks',
      params: notificationIdParams,
      body: z.object({ since: z.iso.datetime({ offset: true, message: 'since must be an ISO 8601 date-time' }) }).strict(),
      responses: { 202: { description: 'Redeliveries queued (the dispatcher sends them within moments)', schema: redeliverySchema } },
      errors: ['invalidRequest', 'subscriptionNotFound'],
      async handler({ params, body, business }) {
        if (!(await getSubscription(db, business.id, params.notificationId))) throw notFound(params.notificationId);
        const runs = await requeueDeliveries(db, business.id, { subscriptionId: params.notificationId, since: new Date(body.since) });
        return { status: 202, body: { redeliveries: runs.length } };
      },
    }),
    route({
      method: 'get',
      path: '/events/:eventId/deliveries',
      operationId: 'listEventDeliveries',
      summary: "An event's deliveries and every attempt",
      tag: 'Webhooks',
      params: eventIdParams,
      query: paginationQuery,
      responses: { 200: { description: 'A page of deliveries', schema: deliveryPage } },
      errors: ['invalidRequest', 'eventNotFound'],
      async handler({ params, query, business }) {
        if (!(await eventOfBusiness(db, business.id, params.eventId))) throw new ApiError('eventNotFound', `Event ${params.eventId} not found.`, { parameter: 'eventId' });
        const { items, totalItems } = await deliveryLog(db, business.id, { eventId: params.eventId }, query);
        return { status: 200, body: { items, meta: pageMeta(query, totalItems) } };
      },
    }),
    route({
      method: 'post',
      path: '/events/:eventId/redeliver',
      operationId: 'redeliverEvent',
      summary: 'Deliver an event again to each of its subscriptions that still exists',
      description: 'The same body and the same data.eventId as before: receivers deduplicate on it.',
      tag: 'Webhooks',
      params: eventIdParams,
      responses: { 202: { description: 'Redeliveries queued (the dispatcher sends them within moments)', schema: redeliverySchema } },
      errors: ['invalidRequest', 'eventNotFound'],
      async handler({ params, business }) {
        if (!(await eventOfBusiness(db, business.id, params.eventId))) throw new ApiError('eventNotFound', `Event ${params.eventId} not found.`, { parameter: 'eventId' });
        const runs = await requeueDeliveries(db, business.id, { eventId: params.eventId });
        return { status: 202, body: { redeliveries: runs.length } };
      },
    }),
    route({
      method: 'get',
      path: '/webhook-keys',
      operationId: 'webhookKeys',
      summary: 'Public keys that verify vouch-signature, with their validity windows',
      description: 'A delivery is signed with the key valid when it is sent (its id is in vouch-signature-key-id). Verify with any key of this environment.',
      tag: 'Webhooks',
      responses: {
        200: {
          description: 'The key ring of this environment',
          schema: z.object({
            environment: z.string(),
            algorithm: z.literal('RSA-SHA512 (PKCS#1 v1.5), Base64'),
            keys: z.array(z.object({ keyId: z.string(), algorithm: z.literal('RSA-SHA512'), publicKeyPem: z.string(), validFrom: z.string(), validUntil: z.string() })),
          }),
        },
      },
      handler() {
        return { status: 200, body: { environment: config.environment, algorithm: 'RSA-SHA512 (PKCS#1 v1.5), Base64', keys: deps.keyRing.map(publicKeyOf) } };
      },
    }),
  ];
}
