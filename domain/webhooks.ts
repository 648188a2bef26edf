// Webhook subscription rules (interface 2.6, 4.2, 6) and the delivery schedule, in one place.
import { z } from 'zod';
import { EVENT_TYPES } from './events.ts';
import { pageMetaSchema } from './pagination.ts';
import { URI_CHARACTER } from './webhook-url.ts';

export const MAX_SUBSCRIPTIONS = 10;
export const MAX_WEBHOOK_URL = 2048;
/** A delivery succeeds on a 2xx answered within this time. */
export const DELIVERY_TIMEOUT_MS = 5000;

/**
 * Waits before each retry: about three days in all. Attempt 1 is immediate; attempt k+1 follows
 * attempt k after RETRY_DELAYS_MS[k-1], each spread by ±20 % jitter so that receivers coming back
 * from an outage are not hit by every sender at once.
 */
export const RETRY_DELAYS_MS = [
  5_000, // 5 s
  5 * 60_000, // 5 min
  30 * 60_000, // 30 min
  2 * 3_600_000, // 2 h
  5 * 3_600_000, // 5 h
  10 * 3_600_000, // 10 h
  10 * 3_600_000, // 10 h
  24 * 3_600_000, // 1 day
  24 * 3_600_000, // 1 day
] as const;
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const RETRY_JITTER = 0.2;

/**
 * A subscription whose every attempt has failed for this long is disabled (the default of
 * WEBHOOK_DISABLE_AFTER_MS): five days, longer than one delivery's own schedule, so an outage over a
 * long weekend does not need a person to turn the subscription back on. Its pending deliveries are
 * kept (not failed) until it is enabled again.
 */
export const DISABLE_AFTER_MS = 5 * 86_400_000;
/**
 * A subscription that answers again after failing for at least this long has its waiting deliveries
 * sent now, not at their next slots. A shorter run of failures (one event its receiver refuses, on an
 * endpoint that takes the others) leaves each delivery on its own schedule.
 */
export const RESUME_AFTER_FAILING_MS = 60_000;

/**
 * How often a subscription failing for over RESUME_AFTER_FAILING_MS is probed (one of its waiting
 * deliveries sent early; if it succeeds, the whole backlog follows at once): every 30 s in its first
 * hour of failing, then every 5 minutes (its deliveries' own slots are hours apart by then). One
 * probe per subscription per interval, however many dispatchers run. The one place of these numbers
 * (store/subscription-health.ts probeFailingSubscriptions passes them to its statement).
 */
export const PROBE = { firstMs: 30_000, firstForMs: 3_600_000, laterMs: 300_000 } as const;

/**
 * Attempts a dispatcher starts in a second to a subscription whose last attempt (of this dispatcher's)
 * failed: a receiver that is down is asked at this pace, not as fast as its refusals come back, and
 * the rest of its due deliveries wait their turn (a retry slot is a not-before time). Its first
 * success lifts the pace. So a business whose receivers are down spends a few attempts a second on
 * them, not the CPU its healthy receivers would need (issue 38, item 0).
 */
export const FAILING_ATTEMPTS_PER_SECOND = 10;

/** A subscription's health: `failing` since its first failed attempt after the last success; `disabled` after DISABLE_AFTER_MS of that. */
export const SUBSCRIPTION_HEALTH_STATES = ['healthy', 'failing', 'disabled'] as const;
export type SubscriptionHealthState = (typeof SUBSCRIPTION_HEALTH_STATES)[number];
export const subscriptionHealthSchema = z
  .object({
    state: z.enum(SUBSCRIPTION_HEALTH_STATES),
    failingSince: z.string().nullable().meta({ description: 'when its current run of failed attempts began (null while healthy)' }),
    disabledAt: z
      .string()
      .nullable()
      .meta({ description: 'when it was disabled (null unless disabled); POST /notification/{notificationId}/enable turns it back on' }),
  })
  .meta({
    description:
      'healthy: its last attempt succeeded. failing: every attempt since failingSince failed; deliveries go on, on their retry schedule. ' +
      'disabled: failing for longer than the service allows; nothing is sent and its pending deliveries are kept until it is enabled.',
  });
export type SubscriptionHealth = z.input<typeof subscriptionHealthSchema>;

export function subscriptionHealth(failingSince: string | null, disabledAt: string | null): SubscriptionHealth {
  return { state: disabledAt ? 'disabled' : failingSince ? 'failing' : 'healthy', failingSince, disabledAt };
}

/** The wait before attempt `attempt + 1`, with jitter from `random` in [0, 1). */
export function retryDelayMs(attempt: number, random: number): number {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) throw new Error(`no retry after attempt ${attempt}`);
  return Math.round(base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random));
}

/** What follows an attempt: done, given up (the schedule is spent), or another attempt after a wait. */
export type AfterAttempt = { status: 'delivered' } | { status: 'failed' } | { status: 'pending'; delayMs: number };

/**
 * `runAttempts`: attempts of the current run, this one included; `random` in [0, 1) for the jitter;
 * `retryAfterMs`: the wait the receiver asked for (retryAfterOf). The next attempt waits the longer
 * of the two: never before the receiver said it would be ready, and never sooner than the schedule
 * (a receiver answering `Retry-After: 1` does not spend its ten attempts in ten seconds).
 */
export function afterAttempt(runAttempts: number, succeeded: boolean, random: number, retryAfterMs = 0): AfterAttempt {
  if (succeeded) return { status: 'delivered' };
  if (runAttempts >= MAX_DELIVERY_ATTEMPTS) return { status: 'failed' };
  return { status: 'pending', delayMs: Math.max(retryAfterMs, retryDelayMs(runAttempts, random)) };
}

/** The longest wait a receiver's `Retry-After` may set (an hour); a longer one is cut to it. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The wait a receiver asks for with `Retry-After` on a 429 (too many requests) or 503 (unavailable):
 * delta-seconds or an HTTP date (RFC 9110 10.2.3), within [1 s, MAX_RETRY_AFTER_MS]. Undefined for
 * another status, or no header, or one that reads as neither form: then the schedule decides.
 */
export function retryAfterOf(status: number | null, header: string | undefined, now: number): number | undefined {
  if ((status !== 429 && status !== 503) || !header) return undefined;
  const value = header.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    if (!/[a-z]/i.test(value) || Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(1000, ms));
}

/** A receiver's 410 Gone: the endpoint is no more, and its subscription is disabled at once. */
export const isGone = (status: number | null): boolean => status === 410;

export const subscriptionBody = z
  .object({
    notificationChannel: z.literal('WEBHOOK', { message: 'notificationChannel must be WEBHOOK' }),
    notificationTypes: z
      .array(z.enum(EVENT_TYPES, { message: `each notification type must be one of ${EVENT_TYPES.join(', ')}` }))
      .min(1, 'notificationTypes needs at least one event type')
      .max(EVENT_TYPES.length)
      .refine((types) => new Set(types).size === types.length, 'notificationTypes lists a type twice; list each type once')
      .meta({ uniqueItems: true }),
    webhookUrl: z
      .string()
      .min(1, 'webhookUrl must not be empty')
      .max(MAX_WEBHOOK_URL, `webhookUrl is at most ${MAX_WEBHOOK_URL} characters`)
      .meta({
        format: 'uri',
        pattern: `^https?://${URI_CHARACTER}+$`,
        description:
          'https:// to a host that resolves to public addresses only (http:// and private addresses only where the service allows them for development)',
      }),
  })
  .strict();

export type SubscriptionInput = z.infer<typeof subscriptionBody>;

export const subscriptionSchema = z.object({
  id: z.uuid(),
  channel: z.literal('WEBHOOK'),
  types: z.array(z.string()),
  config: z.object({ webhook: z.object({ url: z.string() }) }),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Ours beside the interface's fields (docs/decisions/). */
  health: subscriptionHealthSchema,
});
export type SubscriptionView = z.input<typeof subscriptionSchema>;

export const subscriptionPageSchema = z.object({ items: z.array(subscriptionSchema), meta: pageMetaSchema() });
export type SubscriptionPage = z.input<typeof subscriptionPageSchema>;

/** A delivery as the delivery log shows it, with every attempt (oldest first). */
export const deliverySchema = z.object({
  deliveryId: z.uuid(),
  eventId: z.uuid(),
  subscriptionId: z.uuid(),
  status: z.enum(['pending', 'delivered', 'failed', 'canceled']),
  attempts: z.array(
    z.object({
      attempt: z.number().int(),
      at: z.string(),
      url: z.string(),
      keyId: z.string().nullable(),
      httpStatus: z.number().int().nullable(),
      latencyMs: z.number().int().nullable(),
      error: z.string().nullable(),
      succeeded: z.boolean(),
    }),
  ),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
});
export type Delivery = z.input<typeof deliverySchema>;

export const deliveryPageSchema = z.object({ items: z.array(deliverySchema), meta: pageMetaSchema() });
export type DeliveryPage = z.input<typeof deliveryPageSchema>;

export const notificationIdParams = z.object({ notificationId: z.uuid({ message: 'notificationId must be a UUID' }) }).strict();
