// Activities are plain functions built from their dependencies. Workflows import only the type of
// createActivities and call them through proxyActivities.
import type { Logger } from 'pino';
import type { IdentityProvider } from '../provider/types.ts';
import type { Db } from '../store/db.ts';
import { createHousekeepingActivities } from './housekeeping.ts';


export type ActivityDeps = { db: Db; log: Logger; provider: IdentityProvider };

/** Activities of the general task queue. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHousekeepingActivities(deps),
  };
}

/**
 * Activities that call the identity provider. They run only on the provider task queue, whose
 * workers share the fleet-wide rate limit; one attempt makes at most one provider request.
 */
export { createProviderActivities } from './provider.ts';
