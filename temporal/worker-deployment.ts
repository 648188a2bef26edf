// Worker Versioning (docs/architecture.md, "Releasing workflow code"): with TEMPORAL_WORKER_BUILD_ID set, every
// worker of the process joins the Worker Deployment TEMPORAL_WORKER_DEPLOYMENT as that version; the
// server sends new runs to the deployment's current version, keeps pinned runs on theirs and moves
// auto-upgrade runs along (workflows/versioning.ts says which is which). Unset (`npm start`, tests),
// the workers are unversioned, as before.
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../runtime/config.ts';

/** The workers' deployment options: versioned when the release names its build id. */
export function workerDeploymentOptions(config: Config): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  const version = config.temporal.workerVersion;
  if (!version) return {};
  // every workflow type names its behaviour (test/unit/workflow-versioning.test.ts); a new one forgotten there upgrades
  return { workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'AUTO_UPGRADE' } };
}
