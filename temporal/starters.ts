// One typed starter per workflow: the workflow function itself (so its input type is checked), its
// id, its queue, and what to do when a workflow with that id exists — use it while it runs
// (USE_EXISTING), start a new run once it has closed (ALLOW_DUPLICATE). Every start is therefore
// idempotent: the API, activities and the reconciler may all call them as often as they like.
import { WithStartWorkflowOperation, type Client, type WorkflowHandle } from '@temporalio/client';
import { batchWorkflowId, type BatchImportInput } from '../contract/batch-import.ts';
import { requirementBatchWorkflowId } from '../contract/requirement-batch.ts';
import {
  applicantReviewedSignal,
  personVerificationWorkflowId,
  sdkTokenUpdate,
  type PersonVerificationInput,
  type SdkToken,
} from '../contract/person-verification.ts';
import { SEARCH_ATTRIBUTE_KEYS, type RunTags, type VouchStatus } from '../contract/run-tags.ts';
import { sandboxReviewWorkflowId, type SandboxReviewResult } from '../contract/sandbox-review.ts';
import { syncWorkflowId, type SyncImportResult } from '../contract/sync-import.ts';
import { kybOwnerDecidedSignal, kybProfileChangedSignal, kybRecheckSignal, universalKybWorkflowId, type KybSubmissionRun } from '../contract/universal-kyb.ts';
import { ukycPartReceivedSignal, universalKycWorkflowId, type UkycPartReceived, type UkycSubmissionRun } from '../contract/universal-kyc.ts';
import { retentionHoldChangedSignal, retentionWorkflowId } from '../contract/retention.ts';
import { webhookDispatcherWorkflowId } from '../contract/webhook-dispatcher.ts';
import type { Config } from '../runtime/config.ts';
import {
  batchImportWorkflow,
  personVerificationWorkflow,
  requirementBatchWorkflow,
  retentionWorkflow,
  sandboxReviewWorkflow,
  syncImportWorkflow,
  universalKybWorkflow,
  universalKycWorkflow,
  webhookDispatcherWorkflow,
} from '../workflows/index.ts';
import { outcomeOfRun, type RunOutcome } from './run-failures.ts';

/**
 * How a requirement batch moves: records per workflow run (continue-as-new after each page), per
 * step, and steps at once. Each record is a database transaction of a few milliseconds; four
 * steps keep both cores busy without crowding out other businesses' work (bench/requirement-batch.ts).
 */
const REQUIREMENT_BATCH_PACE = { pageSize: 500, chunkSize: 50, concurrency: 4 };

const joinOrRestart = { workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'ALLOW_DUPLICATE' } as const;

/**
 * What an operator sees of a run: search attributes (BusinessId, EntityId, BatchId, VouchStatus),
 * a one-line summary and details in the Temporal UI. Ids and stages only, never personal data.
 */
function described(tags: RunTags | undefined, status: VouchStatus, summary: string, details: string[] = []) {
  const k = SEARCH_ATTRIBUTE_KEYS;
  const typedSearchAttributes = [
    ...(tags ? [{ key: k.businessId, value: tags.businessId }] : []),
    ...(tags?.entityId ? [{ key: k.entityId, value: tags.entityId }] : []),
    ...(tags?.batchId ? [{ key: k.batchId, value: tags.batchId }] : []),
    { key: k.vouchStatus, value: status },
  ];
  const lines = [...(tags ? [`business ${tags.businessId}`] : []), ...(tags?.entityId ? [`entity ${tags.entityId}`] : []), ...details];
  return { typedSearchAttributes, staticSummary: summary, ...(lines.length ? { staticDetails: lines.join('  \n') } : {}) };
}

/** A person's verification workflow ends after this long with nothing to do (a token request or callback restarts it). */
const PERSON_IDLE_MS = 7 * 24 * 3600_000;

/** How long a dispatcher activity runs before the workflow starts the next (keeps histories short, moves work between workers). */
const DISPATCHER_RUN_MS = 10 * 60_000;

export function createStarters(client: Client, config: Config) {
  const t = config.temporal;
  // a run whose activities call the provider names its business: the calls' fairness key (contract/provider-queue.ts providerPriority)
  const batchInput = (batchId: string, businessId: string): BatchImportInput => ({
    batchId,
    businessId,
    providerTaskQueue: t.providerTaskQueue,
    concurrency: t.batchConcurrency,
    pageSize: t.batchPageSize,
    providerRetry: { maximumAttempts: t.batchProviderMaxAttempts, initialIntervalMs: t.batchProviderRetryInitialMs },
  });
  const person = (tags: RunTags & { entityId: string }) => {
    const input: PersonVerificationInput = {
      entityId: tags.entityId,
      businessId: tags.businessId,
      providerTaskQueue: t.providerTaskQueue,
      idleMs: PERSON_IDLE_MS,
    };
    return {
      taskQueue: t.taskQueue,
      workflowId: personVerificationWorkflowId(tags.entityId),
      args: [input] as [PersonVerificationInput],
      ...described(tags, 'waiting', `Hosted-SDK verification of person ${tags.entityId}`),
    };
  };
  const kyb = ({ businessId, ...input }: KybSubmissionRun) => ({
    ...described({ businessId, entityId: input.entityId }, 'waiting', `Universal KYB submission ${input.submissionId} of business entity ${input.entityId}`, [
      `submission ${input.submissionId}`,
      `deadline ${input.deadlineAt}`,
    ]),
    taskQueue: t.taskQueue,
    workflowId: universalKybWorkflowId(input.submissionId),
    args: [input] as [typeof input],
  });
  const retentionRun = (entityId: string, businessId: string) => ({
    ...described({ businessId, entityId }, 'sealed', `Retention of the sealed record of entity ${entityId}: purged at the end of its period`),
    taskQueue: t.taskQueue,
    workflowId: retentionWorkflowId(entityId),
    args: [{ entityId }] as [{ entityId: string }],
  });
  return {
    /** A run of a batch (the upload's, or a retry of its failed rows). */
    async batchRun(batchId: string, run: number, businessId: string): Promise<void> {
      await client.workflow.start(batchImportWorkflow, {
        ...joinOrRestart,
        taskQueue: t.taskQueue,
        workflowId: batchWorkflowId(batchId, run),
        args: [batchInput(batchId, businessId)],
        ...described(
          { businessId, batchId },
          'pending',
          run === 1 ? `Batch import ${batchId}` : `Batch import ${batchId}, retry ${run - 1} of its failed rows`,
          [`batch ${batchId}`],
        ),
      });
    },

    /** A run of a batch of requirement submissions (the upload's, or a retry of its failed records). */
    async requirementBatchRun(batchId: string, run: number, businessId: string): Promise<void> {
      await client.workflow.start(requirementBatchWorkflow, {
        ...joinOrRestart,
        taskQueue: t.taskQueue,
        workflowId: requirementBatchWorkflowId(batchId, run),
        args: [{ batchId, businessId, ...REQUIREMENT_BATCH_PACE }],
        ...described(
          { businessId, batchId },
          'pending',
          run === 1 ? `Requirement batch ${batchId}` : `Requirement batch ${batchId}, retry ${run - 1} of its failed records`,
          [`batch ${batchId}`],
        ),
      });
    },

    /** Runs a sync import's workflow (or joins the one running) and waits for its outcome. */
    syncImport(requestId: string, tags: RunTags): Promise<RunOutcome<SyncImportResult>> {
      return outcomeOfRun(async () => {
        const handle = await client.workflow.start(syncImportWorkflow, {
          ...joinOrRestart,
          ...described(tags, 'in_progress', `Sync import ${requestId}`, [`request ${requestId}`]),
          taskQueue: t.syncTaskQueue,
          workflowId: syncWorkflowId(requestId),
          args: [{ requestId, businessId: tags.businessId, providerTaskQueue: t.providerTaskQueue }],
          workflowExecutionTimeout: '2 minutes',
        });
        return handle.result();
      });
    },

    /** An SDK token for a person, from the person's verification workflow (started if it is not running). */
    sdkToken(tags: RunTags & { entityId: string }): Promise<RunOutcome<SdkToken>> {
      return outcomeOfRun(() =>
        client.workflow.executeUpdateWithStart(sdkTokenUpdate, {
          startWorkflowOperation: new WithStartWorkflowOperation(personVerificationWorkflow, { ...joinOrRestart, ...person(tags) }),
        }),
      );
    },

    /** Tells the person's verification workflow that the provider reviewed an applicant (started if it is not running). */
    async applicantReviewed(tags: RunTags & { entityId: string }, applicantId: string): Promise<void> {
      await client.workflow.signalWithStart(personVerificationWorkflow, { ...person(tags), signal: applicantReviewedSignal, signalArgs: [{ applicantId }] });
    },

    /** Plays a sandbox control request to its end (the review's callback then reaches the person's workflow). */
    sandboxReview(requestId: string, tags: RunTags & { entityId: string }, withPerson: boolean): Promise<RunOutcome<SandboxReviewResult>> {
      const entityId = tags.entityId;
      return outcomeOfRun(() =>
        client.workflow.execute(sandboxReviewWorkflow, {
          ...joinOrRestart,
          ...described(tags, 'in_progress', `Sandbox: plays person ${entityId} and a review`, [`request ${requestId}`]),
          taskQueue: t.taskQueue,
          workflowId: sandboxReviewWorkflowId(requestId),
          args: [{ requestId, entityId, businessId: tags.businessId, providerTaskQueue: t.providerTaskQueue, withPerson }],
          workflowExecutionTimeout: '2 minutes',
        }),
      );
    },

    /** Tells a universal KYC submission's workflow that a part arrived (started if it is not running). */
    async ukycPartReceived(submission: UkycSubmissionRun, part: UkycPartReceived['part']): Promise<void> {
      const { businessId, ...input } = submission;
      await client.workflow.signalWithStart(universalKycWorkflow, {
        ...described({ businessId, entityId: input.entityId }, 'waiting', `Universal KYC submission ${input.submissionId} of person ${input.entityId}`, [
          `submission ${input.submissionId}`,
          `deadline ${input.deadlineAt}`,
        ]),
        taskQueue: t.taskQueue,
        workflowId: universalKycWorkflowId(input.submissionId),
        args: [input],
        signal: ukycPartReceivedSignal,
        signalArgs: [{ part }],
      });
    },

    /** A submitted KYB submission's workflow (joined if it runs already). */
    async kybSubmitted(submission: KybSubmissionRun): Promise<void> {
      await client.workflow.start(universalKybWorkflow, { ...joinOrRestart, ...kyb(submission) });
    },

    /** Tells the submission's workflow that one of its owners was decided (started if it is gone). */
    async kybOwnerDecided(submission: KybSubmissionRun, ownerEntityId: string): Promise<void> {
      await client.workflow.signalWithStart(universalKybWorkflow, { ...kyb(submission), signal: kybOwnerDecidedSignal, signalArgs: [{ ownerEntityId }] });
    },

    /** Tells the submission's workflow that the profile changed: it is superseded and ends (started if it is gone, to end). */
    async kybProfileChanged(submission: KybSubmissionRun): Promise<void> {
      await client.workflow.signalWithStart(universalKybWorkflow, { ...kyb(submission), signal: kybProfileChangedSignal, signalArgs: [] });
    },

    /** The reconciler's nudge to a submission overdue for a look (started again if its workflow is lost). */
    async kybRecheck(submission: KybSubmissionRun): Promise<void> {
      await client.workflow.signalWithStart(universalKybWorkflow, { ...kyb(submission), signal: kybRecheckSignal, signalArgs: [] });
    },

    /** A sealed record's retention workflow: a durable timer to its purge (joined if it runs). */
    async retention(entityId: string, businessId: string): Promise<void> {
      await client.workflow.start(retentionWorkflow, {
        ...joinOrRestart,
        ...retentionRun(entityId, businessId),
      });
    },

    /** A legal hold on the record changed: its retention workflow looks again (started if it is gone, to look). */
    async retentionHoldChanged(entityId: string, businessId: string): Promise<void> {
      await client.workflow.signalWithStart(retentionWorkflow, { ...retentionRun(entityId, businessId), signal: retentionHoldChangedSignal, signalArgs: [] });
    },

    /** The dispatcher of the webhook queue (started by every worker, and by the reconciler if it is gone). */
    async webhookDispatcher(): Promise<void> {
      await client.workflow.start(webhookDispatcherWorkflow, {
        ...joinOrRestart,
        taskQueue: config.webhooks.taskQueue,
        workflowId: webhookDispatcherWorkflowId(config.webhooks.taskQueue),
        args: [{ dispatchers: config.webhooks.dispatchers, runForMs: DISPATCHER_RUN_MS }],
        ...described(undefined, 'running', `Webhook dispatcher of queue ${config.webhooks.taskQueue}: first attempts of every delivery`),
      });
    },
  };
}

export type Starters = ReturnType<typeof createStarters>;
