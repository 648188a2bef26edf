// Activities are plain functions built from their dependencies. Workflows import only the types of
// these factories and call them through proxyActivities.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { SigningKey } from '../domain/webhook-signature.ts';
import type { IdentityProvider } from '../provider/types.ts';
import type { Db } from '../store/db.ts';
import { createBatchActivities } from './batch.ts';
import { createHousekeepingActivities } from './housekeeping.ts';
import { createShareActivities } from './share.ts';
import { createWebhookActivities } from './webhooks.ts';

export type ActivityDeps = {
  db: Db;
  log: Logger;
  provider: IdentityProvider;
  defaultLevel: string;
  /** Activities start delivery workflows. */
  temporal: Client;
  keyRing: readonly SigningKey[];
  webhookTaskQueue: string;
  allowInsecureUrls: boolean;
};

function shares(deps: ActivityDeps) {
  const webhooks = createWebhookActivities(deps);
  return createShareActivities({ ...deps, dispatchEvent: webhooks.dispatchEvent });
}

/** Activities of the general task queue (database work, housekeeping). */
export function createActivities(deps: ActivityDeps) {
  const webhooks = createWebhookActivities(deps);
  return {
    ...createHousekeepingActivities(deps),
    ...createBatchActivities(deps),
    failShare: shares(deps).failShare,
    dispatchStragglers: webhooks.dispatchStragglers,
  };
}

/**
 * Activities that call the identity provider. Batch work runs them on the provider task queue,
 * whose workers share the fleet-wide rate limit; one attempt makes at most one provider request.
 */
export function createProviderActivities(deps: ActivityDeps) {
  const s = shares(deps);
  return {
    processShare: s.processShare,
    recoverShare: s.recoverShare,
  };
}

/** Activities of the webhook task queue: one HTTP delivery attempt each. */
export function createWebhookQueueActivities(deps: ActivityDeps) {
  const { deliverWebhook, giveUpDelivery } = createWebhookActivities(deps);
  return { deliverWebhook, giveUpDelivery };
}

export type GeneralActivities = ReturnType<typeof createActivities>;
export type ProviderActivities = ReturnType<typeof createProviderActivities>;
export type WebhookActivities = ReturnType<typeof createWebhookQueueActivities>;
