// Activities are plain functions built from their dependencies. Workflows import only the types of
// these factories and call them through proxyActivities.
import type { Logger } from 'pino';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { LATENESS_ALLOWED_MS, PROVIDER_SLOT_FAILURE } from '../domain/provider-pace.ts';
import { PROVIDER_REQUEST_METHODS, PROVIDER_REQUEST_TIMEOUT_MS, type IdentityProvider } from '../provider/types.ts';
import type { FileStore } from '../files/store.ts';
import type { Db } from '../store/db.ts';
import { takeProviderSlot } from '../store/provider-pace.ts';
import { createBatchActivities } from './batch.ts';
import { createHousekeepingActivities } from './housekeeping.ts';
import { createKybActivities, createPersonDecidedHook, type OwnerDecidedWaker } from './kyb.ts';
import { createRequirementBatchActivities, type RequirementBatchDeps } from './requirement-batch.ts';
import { createReconcileActivities, startDeliveryRetry, type ReconcileDeps } from './reconcile.ts';
import { createPersonVerificationActivities } from './person-verification.ts';
import { createRetentionActivities, type RetentionDeps } from './retention.ts';
import { createSandboxActivities } from './sandbox.ts';
import { createShareActivities } from './share.ts';
import { createUniversalKycActivities } from './universal-kyc.ts';
import { createWebhookActivities } from './webhooks.ts';
import { createWebhookSender, type WebhookKeys } from './webhook-send.ts';

/** What activities need to know of the configuration (the worker fills it in from runtime/config.ts). */
export type ActivitySettings = {
  /** The provider level used when a record names none. */
  defaultLevel: string;
  /** How far apart provider calls go, fleet-wide (domain/provider-pace.ts). */
  providerSpacingMs: number;
  /** How long a universal KYC submission waits for its identity document. */
  ukycDeadlineSeconds: number;
  webhooks: {
    allowInsecureUrls: boolean;
    maxInFlight: number;
    maxInFlightPerSubscription: number;
    maxInFlightPerBusiness: number;
    pollMs: number;
    disableAfterMs: number;
  };
};

export type ActivityDeps = {
  db: Db;
  log: Logger;
  provider: IdentityProvider;
  settings: ActivitySettings;
  /** The reconciler asks whether a run is running (temporal/runs.ts). */
  runs: ReconcileDeps['runs'];
  /** Idempotent workflow starts (temporal/starters.ts): activities never name workflow code themselves. */
  start: ReconcileDeps['start'] & RetentionDeps['start'] & { kybOwnerDecided: OwnerDecidedWaker; ukycPartReceived: RequirementBatchDeps['ukycPartReceived'] };
  webhookKeys: WebhookKeys;
  /** The file store (housekeeping removes the bytes no row names). */
  files: FileStore;
};

/** Activities of the general task queue (database work, housekeeping, the reconciler). */
/** What every deciding activity calls once a person's decision is committed. */
const personDecidedHook = (deps: ActivityDeps) => createPersonDecidedHook({ db: deps.db, log: deps.log, ownerDecided: deps.start.kybOwnerDecided });

export function createActivities(deps: ActivityDeps) {
  const personDecided = personDecidedHook(deps);
  return {
    ...createHousekeepingActivities(deps),
    ...createReconcileActivities(deps),
    ...createBatchActivities(deps),
    ...createUniversalKycActivities({ db: deps.db, personDecided }),
    ...createRequirementBatchActivities({
      db: deps.db,
      log: deps.log,
      ukycDeadlineSeconds: deps.settings.ukycDeadlineSeconds,
      ukycPartReceived: (s, part) => deps.start.ukycPartReceived(s, part),
      personDecided,
    }),
    ...createKybActivities(deps),
    ...createRetentionActivities(deps),
    failShare: createShareActivities({ ...deps, defaultLevel: deps.settings.defaultLevel }).failShare,
  };
}

/**
 * Activities that call the identity provider, on the provider task queue whose workers share the
 * fleet-wide rate limit (batches and sync imports alike); one attempt makes at most one provider request.
 */
export function createProviderActivities(base: ActivityDeps) {
  const deps = { ...base, provider: paced(base.provider, () => waitForSlot(base.db, base.settings.providerSpacingMs)) };
  const personDecided = personDecidedHook(deps);
  const s = createShareActivities({ ...deps, defaultLevel: deps.settings.defaultLevel, personDecided });
  const p = createPersonVerificationActivities({ ...deps, defaultLevel: deps.settings.defaultLevel, personDecided });
  return {
    processShare: s.processShare,
    recoverShare: s.recoverShare,
    createSdkToken: p.createSdkToken,
    decidePersonReview: p.decidePersonReview,
    ...createSandboxActivities({ ...deps, defaultLevel: deps.settings.defaultLevel }),
  };
}

/** The provider with every request waiting for its slot first (the other members as they are). */
function paced(provider: IdentityProvider, pace: () => Promise<void>): IdentityProvider {
  const wrapped: Record<string, unknown> = {};
  for (const method of PROVIDER_REQUEST_METHODS) {
    const call = provider[method] as (...a: unknown[]) => Promise<unknown>;
    wrapped[method] = async (...args: unknown[]) => {
      await pace();
      return call.apply(provider, args);
    };
  }
  return Object.assign(Object.create(provider) as IdentityProvider, wrapped);
}

const sleepMs = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

/**
 * Waits for the call's slot, within the attempt's budget: the time its start-to-close timeout leaves
 * beyond the provider request itself. A slot further away than that fails the attempt (retryable,
 * before any request goes out) rather than letting Temporal time it out while its request is still
 * to be sent — a timed-out attempt whose request goes out anyway could spend a share token twice.
 * A process that wakes late by more than the pace's margin (a busy event loop) would send its call
 * too close to the next one's: then it takes a new slot, once. Not more: on a saturated machine
 * (a soak with every business at 3 sync imports a second) retaking until on time burnt most slots
 * unused and the provider got 2 calls a second instead of 9.5.
 */
export async function waitForSlot(db: Db, spacingMs: number, sleep: (ms: number) => Promise<void> = sleepMs): Promise<void> {
  for (let tries = 1; ; tries++) {
    const wait = await takeProviderSlot(db, spacingMs);
    const info = Context.current().info;
    const left = info.startToCloseTimeoutMs - (Date.now() - info.currentAttemptScheduledTimestampMs) - PROVIDER_REQUEST_TIMEOUT_MS;
    if (wait > left) {
      throw ApplicationFailure.retryable(
        `the provider's next free slot is ${Math.round(wait)} ms away, more than this attempt can wait (${Math.max(0, Math.round(left))} ms)`,
        PROVIDER_SLOT_FAILURE,
      );
    }
    const due = performance.now() + wait;
    await sleep(wait);
    if (performance.now() - due <= LATENESS_ALLOWED_MS || tries >= 2) return;
  }
}

/** Activities of the webhook task queue: the dispatcher, and the attempts of retry workflows. */
export function createWebhookQueueActivities(deps: ActivityDeps) {
  const w = deps.settings.webhooks;
  return createWebhookActivities({
    db: deps.db,
    log: deps.log,
    send: createWebhookSender({ keys: deps.webhookKeys, allowInsecureUrls: w.allowInsecureUrls }),
    dispatcher: {
      maxInFlight: w.maxInFlight,
      perSubscription: w.maxInFlightPerSubscription,
      perBusiness: w.maxInFlightPerBusiness,
      leaseMs: 30_000,
      pollMs: w.pollMs,
    },
    disableAfterMs: w.disableAfterMs,
    startRetry: (deliveryId, run) => startDeliveryRetry(deps, deliveryId, run),
  });
}

export type GeneralActivities = ReturnType<typeof createActivities>;
export type ProviderActivities = ReturnType<typeof createProviderActivities>;
export type WebhookActivities = ReturnType<typeof createWebhookQueueActivities>;
