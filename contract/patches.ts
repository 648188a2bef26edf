// Every patch (`patched()` / `deprecatePatch()` of @temporalio/workflow) in workflow code, with the
// release that introduced it. The retirement rule (docs/architecture.md, "Changing a workflow"): a patch made in
// release N stays `patched(id)` through N+1; in N+2 it becomes `deprecatePatch(id)`, its old branch
// and its `*-before-<name>` fixtures go and the touched histories are recorded again; in N+3 the
// call goes too. test/unit/patches.test.ts holds the code, the fixtures and this table to it.

export type PatchStage = 'patched' | 'deprecated';
export type Patch = { id: string; introducedIn: Release; touches: string[] };

export const PATCHES = {
  /** Runs keep their VouchStatus search attribute current (workflows/status.ts). */
  vouchStatus: { id: 'vouch-status-search-attribute', introducedIn: '1.0.1', touches: ['every workflow that sets VouchStatus'] },
  /** Housekeeping sends reminders and new-feature announcements. */
  lifecycleEvents: { id: 'lifecycle-events', introducedIn: '1.0.2', touches: ['housekeepingWorkflow'] },
  /**
   * Universal KYB handles kybProfileChanged and kybRecheck beside kybOwnerDecided. Behind a patch: a
   * run that began without their handlers keeps them unhandled, as it did when it ran.
   */
  kybWakeSignals: { id: 'kyb-wake-signals', introducedIn: '1.0.3', touches: ['universalKybWorkflow'] },
  /** Housekeeping makes sure every sealed record past its date has its retention workflow. */
  reconcileRetention: { id: 'reconcile-retention', introducedIn: '1.1.0', touches: ['housekeepingWorkflow'] },
  /** Housekeeping restarts unfinished batches of requirement submissions whose workflow is gone. */
  reconcileRequirementBatches: { id: 'reconcile-requirement-batches', introducedIn: '1.1.0', touches: ['housekeepingWorkflow'] },
} as const satisfies Record<string, Patch>;

/** The service's releases, oldest first (CHANGELOG.md, "Changelog"); the last is package.json's version. */
export const RELEASES = ['1.0.1', '1.0.2', '1.0.3', '1.1.0'] as const;
export type Release = (typeof RELEASES)[number];

/** What the rule asks of a patch in a release: still `patched`, `deprecated`, or gone (`removed`). */
export function patchStageIn(patch: { introducedIn: Release }, release: Release): PatchStage | 'removed' {
  const age = RELEASES.indexOf(release) - RELEASES.indexOf(patch.introducedIn);
  return age < 2 ? 'patched' : age === 2 ? 'deprecated' : 'removed';
}
