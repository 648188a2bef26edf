// Names a workflow type's Worker Versioning behaviour (workflows/versioning.ts has the table).
import type { VersioningBehavior } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';

/**
 * Names a workflow's behaviour for versioned workers. Only a versioned worker may name one (an
 * unversioned worker's task completions are refused with it), so it is named only when the worker
 * running the run's first task here has a deployment version. (A run started by unversioned
 * workers and moved to a versioned one, then replayed there from its start, reads no version at its
 * first task and so takes the worker's default, auto-upgrade: such runs are under the patch rule
 * anyway — docs/architecture.md, "Releasing workflow code".)
 */
export function setVersioningBehavior(workflow: (...args: never[]) => Promise<unknown>, behavior: VersioningBehavior): void {
  // an unversioned worker reports a version too (its build id, no deployment name)
  setWorkflowOptions(() => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: behavior } : {}), workflow);
}
