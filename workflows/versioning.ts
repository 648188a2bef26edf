// How each workflow type moves between releases under Worker Versioning (docs/architecture.md, "Releasing workflow
// code"), one row each; test/unit/workflow-versioning.test.ts checks every exported workflow has one.
// - PINNED: a run finishes on the release that started it, whatever is released meanwhile; that
//   release's workers stay until its runs are done (the version drains). For the runs that decide a
//   person or a business — the decision rests wholly on the code that took the request — and for
//   short runs, where pinning costs nothing.
// - AUTO_UPGRADE: a run moves to the current release at its next workflow task, so its code must
//   replay on the new release: a patch for every change, proved by the replay gate
//   (test/integration/replay.test.ts). For the runs that never end or sleep for months — pinned, they
//   would keep an old release running for ever.
import type { VersioningBehavior } from '@temporalio/common';
import { setVersioningBehavior } from './versioning-behavior.ts';
import { auditCheckpointWorkflow } from './audit-checkpoint.ts';
import { batchImportWorkflow } from './batch-import.ts';
import { housekeepingWorkflow } from './housekeeping.ts';
import { personVerificationWorkflow } from './person-verification.ts';
import { requirementBatchWorkflow } from './requirement-batch.ts';
import { retentionWorkflow } from './retention.ts';
import { sandboxReviewWorkflow } from './sandbox-review.ts';
import { syncImportWorkflow } from './sync-import.ts';
import { universalKybWorkflow } from './universal-kyb.ts';
import { universalKycWorkflow } from './universal-kyc.ts';
import { webhookDispatcherWorkflow } from './webhook-dispatcher.ts';
import { webhookRetryWorkflow } from './webhook-retry.ts';

type Row = { workflow: (...args: never[]) => Promise<unknown>; behavior: VersioningBehavior; why: string };

export const VERSIONING: Record<string, Row> = {
  personVerificationWorkflow: { workflow: personVerificationWorkflow, behavior: 'PINNED', why: "a person's decision, waiting up to 7 days" },
  universalKycWorkflow: { workflow: universalKycWorkflow, behavior: 'PINNED', why: "a person's decision, waiting up to 7 days for a document" },
  universalKybWorkflow: { workflow: universalKybWorkflow, behavior: 'PINNED', why: "a business's decision, waiting up to 30 days for its owners" },
  syncImportWorkflow: { workflow: syncImportWorkflow, behavior: 'PINNED', why: 'seconds, a caller waiting' },
  sandboxReviewWorkflow: { workflow: sandboxReviewWorkflow, behavior: 'PINNED', why: 'seconds' },
  housekeepingWorkflow: { workflow: housekeepingWorkflow, behavior: 'PINNED', why: 'an hour of passes a minute apart, one run an hour from its schedule' },
  auditCheckpointWorkflow: { workflow: auditCheckpointWorkflow, behavior: 'PINNED', why: 'one step, once per schedule interval' },
  batchImportWorkflow: { workflow: batchImportWorkflow, behavior: 'AUTO_UPGRADE', why: 'hours, in pages (continue-as-new)' },
  requirementBatchWorkflow: { workflow: requirementBatchWorkflow, behavior: 'AUTO_UPGRADE', why: 'hours, in pages (continue-as-new)' },
  webhookDispatcherWorkflow: { workflow: webhookDispatcherWorkflow, behavior: 'AUTO_UPGRADE', why: 'never ends' },
  webhookRetryWorkflow: {
    workflow: webhookRetryWorkflow,
    behavior: 'AUTO_UPGRADE',
    why: "retired (retries wait in PostgreSQL): an earlier release's runs move here and end at their next step",
  },
  retentionWorkflow: { workflow: retentionWorkflow, behavior: 'AUTO_UPGRADE', why: "sleeps until a sealed record's retention ends, years" },
};

for (const { workflow, behavior } of Object.values(VERSIONING)) setVersioningBehavior(workflow, behavior);
