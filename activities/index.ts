// Activities are plain functions built from their dependencies. Workflows import only the types of
// these factories and call them through proxyActivities.
import type { Logger } from 'pino';
import type { ProviderPace } from '../domain/provider-pace.ts';
import type { IdentityProvider } from '../provider/types.ts';
import type { FileStore } from '../files/file-store.ts';
import type { Db } from '../store/db.ts';
import type { SigningKey } from '../domain/webhook-signature.ts';
import { createAuditCheckpointActivities } from './audit-checkpoints.ts';
import { createBatchActivities } from './batch.ts';
import { createHousekeepingActivities } from './housekeeping.ts';
import { createKybActivities, createPersonDecidedHook, type OwnerDecidedWaker } from './kyb.ts';
import { createRequirementBatchActivities, type RequirementBatchDeps } from './requirement-batch.ts';
import { createReconcileActivities, type ReconcileDeps } from './reconcile.ts';
import { createPersonVerificationActivities } from './person-verification.ts';
import { paced } from './provider-pace.ts';
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
  /** How provider calls are paced, fleet-wide (domain/provider-pace.ts). */
  providerPace: ProviderPace;
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
  /** The file store (housekeeping removes the bytes no row names; audit checkpoints are kept in it). */
  files: FileStore;
  /** The ring that signs the audit chain's checkpoints (a key the database never holds). */
  checkpointKeys: readonly SigningKey[];
};

/** What every deciding activity calls once a person's decision is committed. */
const personDecidedHook = (deps: ActivityDeps) => createPersonDecidedHook({ db: deps.db, log: deps.log, ownerDecided: deps.start.kybOwnerDecided });

/** Activities of the general task queue (database work, housekeeping, the reconciler). */
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
    ...createAuditCheckpointActivities(deps),
    failShare: createShareActivities({ ...deps, defaultLevel: deps.settings.defaultLevel }).failShare,
  };
}

/**
 * Activities that call the identity provider, on the provider task queue whose workers share the
 * fleet-wide rate limit (batches and sync imports alike); one attempt makes at most one provider request.
 */
export function createProviderActivities(base: ActivityDeps) {
  const deps = { ...base, provider: paced(base.provider, base.db, base.settings.providerPace, base.log) };
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

/** Activities of the webhook task queue: the dispatcher, and the steps of retired retry workflows' runs. */
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
  });
}

export type GeneralActivities = ReturnType<typeof createActivities>;
export type ProviderActivities = ReturnType<typeof createProviderActivities>;
export type WebhookActivities = ReturnType<typeof createWebhookQueueActivities>;
