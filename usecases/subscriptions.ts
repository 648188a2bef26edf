// Webhook subscriptions (interface 2.6 and 4.2), scoped to the calling business.
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { pageMeta, type Page } from '../domain/pagination.ts';
import { MAX_SUBSCRIPTIONS, subscriptionHealth, type SubscriptionInput, type SubscriptionPage, type SubscriptionView } from '../domain/webhooks.ts';
import { createSecretBox, type SealingKey, type SecretBox } from '../domain/secret-box.ts';
import { newSubscriptionSecret, SECRET_ROTATION_OVERLAP_MS, type SubscriptionSecret } from '../domain/subscription-secret.ts';
import { enableSubscription as enableStoredSubscription } from '../store/subscription-health.ts';
import {
  createSubscription as insertSubscription,
  deleteSubscription as removeSubscription,
  getSubscription as findSubscription,
  listSubscriptions as pageOfSubscriptions,
  replaceSubscription as updateSubscription,
  issueMissingSecrets,
  noteSecretRead,
  rotateSubscriptionSecret as rotateStoredSecret,
  subscriptionSecrets,
  SubscriptionLimitReached,
  type SealedSecrets,
  type Subscription,
} from '../store/subscriptions.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { checkDeliverableUrl } from './deliverable-url.ts';

/** A subscription as interface 2.6 shows it. */
const present = (s: Subscription): SubscriptionView => ({
  id: s.id,
  channel: s.channel,
  types: s.types,
  config: { webhook: { url: s.url } },
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
  health: subscriptionHealth(s.failingSince, s.disabledAt),
});

export const subscriptionNotFound = (id: string) =>
  refuse('subscriptionNotFound', `Webhook subscription ${id} not found in your business; GET /notification lists your subscriptions.`, {
    parameter: 'notificationId',
  });

const boxes = new WeakMap<readonly SealingKey[], SecretBox>();
/** The box that seals and opens subscription secrets with this process's payload codec ring. */
const boxOf = (ring: readonly SealingKey[]): SecretBox => {
  let box = boxes.get(ring);
  if (!box) boxes.set(ring, (box = createSecretBox(ring)));
  return box;
};

/** A new secret, sealed for the subscription (the clear secret kept only to answer this one request). */
function freshSecret(ring: readonly SealingKey[]) {
  const secret = newSubscriptionSecret();
  return { secret, seal: (subscriptionId: string) => boxOf(ring).seal(subscriptionId, secret) };
}

const secretView = (ring: readonly SealingKey[], id: string, s: SealedSecrets): SubscriptionSecret => ({
  secret: boxOf(ring).open(id, s.sealed!),
  previousSecretExpiresAt: s.previousUntil,
});

/** Registers a subscription; the answer carries its secret (as GET …/secret does, and no other read). */
export async function createSubscription(
  { db, config, keys }: UseCaseContext,
  caller: Caller,
  input: SubscriptionInput,
): Promise<Outcome<SubscriptionView & { secret: string }>> {
  const url = await checkDeliverableUrl(input.webhookUrl, config.webhooks.allowInsecureUrls);
  if (!url.ok) return url;
  const { secret, seal } = freshSecret(keys.sealing);
  try {
    return done({ ...present(await insertSubscription(db, caller.id, input, seal)), secret });
  } catch (err) {
    if (!(err instanceof SubscriptionLimitReached)) throw err;
    return refuse('subscriptionLimit', `Your business already has ${MAX_SUBSCRIPTIONS} webhook subscriptions; delete one before registering another.`);
  }
}

export async function listSubscriptions({ db }: UseCaseContext, caller: Caller, page: Page): Promise<Outcome<SubscriptionPage>> {
  const { items, totalItems } = await pageOfSubscriptions(db, caller.id, page);
  return done({ items: items.map(present), meta: pageMeta(page, totalItems) });
}

export async function getSubscription({ db }: UseCaseContext, caller: Caller, id: string): Promise<Outcome<SubscriptionView>> {
  const s = await findSubscription(db, caller.id, id);
  return s ? done(present(s)) : subscriptionNotFound(id);
}

/**
 * Replaces channel, types and URL; pending retries go to the new URL from their next attempt. A new
 * URL for a failing or disabled subscription is a fresh start: it is enabled, its waiting and held
 * deliveries sent now.
 */
export async function replaceSubscription(
  { db, config }: UseCaseContext,
  caller: Caller,
  id: string,
  input: SubscriptionInput,
): Promise<Outcome<SubscriptionView>> {
  if (!(await findSubscription(db, caller.id, id))) return subscriptionNotFound(id);
  const url = await checkDeliverableUrl(input.webhookUrl, config.webhooks.allowInsecureUrls);
  if (!url.ok) return url;
  const s = await updateSubscription(db, caller.id, id, input);
  return s ? done(present(s)) : subscriptionNotFound(id);
}

/** Deletes the subscription; delivery stops at once, pending retries included. */
export async function deleteSubscription({ db, runs, log }: UseCaseContext, caller: Caller, id: string): Promise<Outcome<undefined>> {
  const waiting = await removeSubscription(db, caller.id, id);
  if (!waiting) return subscriptionNotFound(id);
  // The deliveries are canceled in PostgreSQL, which every attempt checks first; canceling their
  // retry workflows too just ends them now instead of at their next attempt.
  await Promise.all(
    waiting.map(({ deliveryId, run }) =>
      runs.cancelDeliveryRetry(deliveryId, run).catch((err: unknown) => {
        log.warn({ err, deliveryId }, 'delivery canceled; its retry workflow ends at its next attempt instead');
      }),
    ),
  );
  return done(undefined);
}

/**
 * Turns a subscription back on: healthy again, and every delivery it holds or that waits for a retry
 * slot goes to the dispatcher now (paced by the per-subscription in-flight limit).
 */
export async function enableSubscription({ db }: UseCaseContext, caller: Caller, id: string): Promise<Outcome<SubscriptionView>> {
  const enabled = await enableStoredSubscription(db, caller.id, id);
  return enabled ? done(present(enabled.subscription)) : subscriptionNotFound(id);
}

/**
 * The subscription's secret (and until when the one a rotation replaced still signs). A subscription
 * made before secrets existed is given one now, if the reconciler has not yet.
 */
export async function getSubscriptionSecret({ db, keys }: UseCaseContext, caller: Caller, id: string): Promise<Outcome<SubscriptionSecret>> {
  let stored = await subscriptionSecrets(db, caller.id, id);
  if (stored && stored.sealed === null) {
    await issueMissingSecrets(db, (subscriptionId) => boxOf(keys.sealing).seal(subscriptionId, newSubscriptionSecret()), { only: id });
    stored = await subscriptionSecrets(db, caller.id, id);
  }
  if (!stored) return subscriptionNotFound(id);
  await noteSecretRead(db, caller.id, id);
  return done(secretView(keys.sealing, id, stored));
}

/** A new secret; the one it replaces keeps signing beside it for 24 hours (one replaced earlier stops now). */
export async function rotateSubscriptionSecret({ db, keys }: UseCaseContext, caller: Caller, id: string): Promise<Outcome<SubscriptionSecret>> {
  const { secret, seal } = freshSecret(keys.sealing);
  const stored = await rotateStoredSecret(db, caller.id, id, seal, SECRET_ROTATION_OVERLAP_MS);
  return stored ? done({ secret, previousSecretExpiresAt: stored.previousUntil }) : subscriptionNotFound(id);
}
