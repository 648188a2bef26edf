// One typed starter per workflow: the workflow function itself (so its input type is checked), its
// id, its queue, and what to do when a workflow with that id exists — use it while it runs
// (USE_EXISTING), start a new run once it has closed (ALLOW_DUPLICATE). Every start is therefore
// idempotent: the API, activities and the reconciler may all call them as often as they like.
import { WithStartWorkflowOperation, type Client, type WorkflowHandle } from '@temporalio/client';
import { batchImportWorkflow, personVerificationWorkflow, sandboxReviewWorkflow, syncImportWorkflow, universalKycWorkflow, webhookDispatcherWorkflow, webhookRetryWorkflow } from '../workflows/index.ts';
import { applicantReviewedSignal, sdkTokenUpdate } from '../workflows/person-verification.ts';
import { ukycPartReceivedSignal } from '../workflows/universal-kyc.ts';
import {
  batchWorkflowId,
  personVerificationWorkflowId,
  sandboxReviewWorkflowId,
  universalKycWorkflowId,
  syncWorkflowId,
  webhookDispatcherWorkflowId,
  webhookRetryWorkflowId,
  type BatchImportInput,
  type PersonVerificationInput,
  type SandboxReviewResult,
  type SdkToken,
  type UkycPartReceived,
} from '../contract/workflows.ts';
import type { Config } from './config.ts';

const once = { workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'ALLOW_DUPLICATE' } as const;

/** A person's verification workflow ends after this long with nothing to do (a token request or callback restarts it). */
const PERSON_IDLE_MS = 7 * 24 * 3600_000;

/** How long a dispatcher activity runs before the workflow starts the next (keeps histories short, moves work between workers). */
const DISPATCHER_RUN_MS = 10 * 60_000;

export function createStarters(client: Client, config: Config) {
  const t = config.temporal;
  const batchInput = (batchId: string): BatchImportInput => ({
    batchId,
    providerTaskQueue: t.providerTaskQueue,
    concurrency: t.batchConcurrency,
    pageSize: t.batchPageSize,
    providerRetry: { maximumAttempts: t.batchProviderMaxAttempts, initialIntervalMs: t.batchProviderRetryInitialMs },
  });
  const person = (entityId: string) => {
    const input: PersonVerificationInput = { entityId, providerTaskQueue: t.providerTaskQueue, idleMs: PERSON_IDLE_MS };
    return { taskQueue: t.taskQueue, workflowId: personVerificationWorkflowId(entityId), args: [input] as [PersonVerificationInput] };
  };
  return {
    /** A run of a batch (the upload's, or a retry of its failed rows). */
    async batchRun(batchId: string, run: number): Promise<void> {
      await client.workflow.start(batchImportWorkflow, { ...once, taskQueue: t.taskQueue, workflowId: batchWorkflowId(batchId, run), args: [batchInput(batchId)] });
    },

    /** A sync import's workflow; the handle's result() is its outcome. */
    syncImport(requestId: string): Promise<WorkflowHandle<typeof syncImportWorkflow>> {
      return client.workflow.start(syncImportWorkflow, {
        ...once,
        taskQueue: t.syncTaskQueue,
        workflowId: syncWorkflowId(requestId),
        args: [{ requestId, providerTaskQueue: t.providerTaskQueue }],
        workflowExecutionTimeout: '2 minutes',
      });
    },

    /** An SDK token for a person, from the person's verification workflow (started if it is not running). */
    sdkToken(entityId: string): Promise<SdkToken> {
      return client.workflow.executeUpdateWithStart(sdkTokenUpdate, {
        startWorkflowOperation: new WithStartWorkflowOperation(personVerificationWorkflow, { ...once, ...person(entityId) }),
      });
    },

    /** Tells the person's verification workflow that the provider reviewed an applicant (started if it is not running). */
    async applicantReviewed(entityId: string, applicantId: string): Promise<void> {
      await client.workflow.signalWithStart(personVerificationWorkflow, { ...person(entityId), signal: applicantReviewedSignal, signalArgs: [{ applicantId }] });
    },

    /** Plays a sandbox control request to its end (the review's callback then reaches the person's workflow). */
    sandboxReview(requestId: string, entityId: string, withPerson: boolean): Promise<SandboxReviewResult> {
      return client.workflow.execute(sandboxReviewWorkflow, {
        ...once,
        taskQueue: t.taskQueue,
        workflowId: sandboxReviewWorkflowId(requestId),
        args: [{ requestId, entityId, providerTaskQueue: t.providerTaskQueue, withPerson }],
        workflowExecutionTimeout: '2 minutes',
      });
    },

    /** Tells a universal KYC submission's workflow that a part arrived (started if it is not running). */
    async ukycPartReceived(submission: { submissionId: string; entityId: string; deadlineAt: string }, part: UkycPartReceived['part']): Promise<void> {
      await client.workflow.signalWithStart(universalKycWorkflow, {
        taskQueue: t.taskQueue,
        workflowId: universalKycWorkflowId(submission.submissionId),
        args: [submission],
        signal: ukycPartReceivedSignal,
        signalArgs: [{ part }],
      });
    },

    /** The retry workflow of a delivery whose attempt failed. */
    async deliveryRetry(deliveryId: string, run: number): Promise<void> {
      await client.workflow.start(webhookRetryWorkflow, { ...once, taskQueue: config.webhooks.taskQueue, workflowId: webhookRetryWorkflowId(deliveryId, run), args: [{ deliveryId }] });
    },

    /** The dispatcher of the webhook queue (started by every worker, and by the reconciler if it is gone). */
    async webhookDispatcher(): Promise<void> {
      await client.workflow.start(webhookDispatcherWorkflow, {
        ...once,
        taskQueue: config.webhooks.taskQueue,
        workflowId: webhookDispatcherWorkflowId(config.webhooks.taskQueue),
        args: [{ dispatchers: config.webhooks.dispatchers, runForMs: DISPATCHER_RUN_MS }],
      });
    },
  };
}

export type Starters = ReturnType<typeof createStarters>;
