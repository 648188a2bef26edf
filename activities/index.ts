// Activities are plain functions built from their dependencies. Workflows import only the types of
// these factories and call them through proxyActivities.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { IdentityProvider } from '../provider/types.ts';
import type { FileStore } from '../files/store.ts';
import type { Db } from '../store/db.ts';
import { takeProviderSlot } from '../store/provider-pace.ts';
import { createBatchActivities } from './batch.ts';
import { createHousekeepingActivities } from './housekeeping.ts';
import { createKybActivities, createPersonDecidedHook } from './kyb.ts';
import { createReconcileActivities, startDeliveryRetry, type ReconcileDeps } from './reconcile.ts';
import { createPersonVerificationActivities } from './person-verification.ts';
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
  webhooks: { allowInsecureUrls: boolean; maxInFlight: number; maxInFlightPerSubscription: number; maxInFlightPerBusiness: number; pollMs: number };
};

export type ActivityDeps = {
  db: Db;
  log: Logger;
  provider: IdentityProvider;
  settings: ActivitySettings;
  /** The reconciler describes workflows. */
  temporal: Client;
  /** Idempotent workflow starts (runtime/starters.ts): activities never name workflow code themselves. */
  start: ReconcileDeps['start'];
  webhookKeys: WebhookKeys;
  /** The file store (housekeeping removes the bytes no row names). */
  files: FileStore;
};

/** Activities of the general task queue (database work, housekeeping, the reconciler). */
/** What every deciding activity calls once a person's decision is committed. */
const personDecidedHook = (deps: ActivityDeps) => createPersonDecidedHook({ db: deps.db, log: deps.log, wake: deps.start.kybWake });

export function createActivities(deps: ActivityDeps) {
  const personDecided = personDecidedHook(deps);
  return {
    ...createHousekeepingActivities(deps),
    ...createReconcileActivities(deps),
    ...createBatchActivities(deps),
    ...createUniversalKycActivities({ db: deps.db, personDecided }),
    ...createKybActivities(deps),
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

/** The provider with every call waiting for its slot first. */
function paced(provider: IdentityProvider, pace: () => Promise<void>): IdentityProvider {
  return new Proxy(provider, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await pace();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const sleepMs = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

/**
 * Waits for the call's slot. A process that wakes late (a busy event loop, a paused machine) would
 * send its call closer to the next slot's than the spacing: then it takes a new slot instead (a few
 * times at most, so a process that is always late still makes progress).
 */
async function waitForSlot(db: Db, spacingMs: number): Promise<void> {
  for (let tries = 1; ; tries++) {
    const wait = await takeProviderSlot(db, spacingMs);
    const due = performance.now() + wait;
    await sleepMs(wait);
    if (performance.now() - due <= spacingMs / 2 || tries >= 5) return;
  }
}

/** Activities of the webhook task queue: the dispatcher, and the attempts of retry workflows. */
export function createWebhookQueueActivities(deps: ActivityDeps) {
  const w = deps.settings.webhooks;
  return createWebhookActivities({
    db: deps.db,
    log: deps.log,
    send: createWebhookSender({ keys: deps.webhookKeys, allowInsecureUrls: w.allowInsecureUrls }),
    dispatcher: { maxInFlight: w.maxInFlight, perSubscription: w.maxInFlightPerSubscription, perBusiness: w.maxInFlightPerBusiness, leaseMs: 30_000, pollMs: w.pollMs },
    startRetry: (deliveryId, run) => startDeliveryRetry(deps, deliveryId, run),
  });
}

export type GeneralActivities = ReturnType<typeof createActivities>;
export type ProviderActivities = ReturnType<typeof createProviderActivities>;
export type WebhookActivities = ReturnType<typeof createWebhookQueueActivities>;
