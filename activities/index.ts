// Activities are plain functions built from their dependencies. Workflows import only the types of
// these factories and call them through proxyActivities.
import type { Logger } from 'pino';
import type { IdentityProvider } from '../provider/types.ts';
import type { Db } from '../store/db.ts';
import { createBatchActivities } from './batch.ts';
import { createHousekeepingActivities } from './housekeeping.ts';
import { createProviderActivities as createProviderCalls } from './provider.ts';
import { createShareActivities } from './share.ts';

export type ActivityDeps = { db: Db; log: Logger; provider: IdentityProvider; defaultLevel: string };

/** Activities of the general task queue (database work). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHousekeepingActivities(deps),
    ...createBatchActivities(deps),
    failShare: createShareActivities(deps).failShare,
  };
}

/**
 * Activities that call the identity provider. Batch work runs them on the provider task queue,
 * whose workers share the fleet-wide rate limit; one attempt makes at most one provider request.
 */
export function createProviderActivities(deps: ActivityDeps) {
  const shares = createShareActivities(deps);
  return {
    ...createProviderCalls(deps),
    processShare: shares.processShare,
    recoverShare: shares.recoverShare,
  };
}

export type GeneralActivities = ReturnType<typeof createActivities>;
export type ProviderActivities = ReturnType<typeof createProviderActivities>;
