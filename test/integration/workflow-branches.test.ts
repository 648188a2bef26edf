// Workflow branches with stand-in activities on Temporal's time-skipping test server (the samples'
// pattern): no database, no provider, no API — each branch of the share record (as the sync import
// and the batch run it), the batch engine's paging, continue-as-new, cancel and failures for both
// kinds, retention's five-year sleep and its hold, and universal KYB's wait for its owners or its
// deadline (two days of five-minute looks skipped in seconds). The full-stack tests beside these
// prove the activities; these prove what the workflow code does with each answer they can give.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { ShareOutcome } from '../../activities/share.ts';
import type { KybReadiness, KybSettled } from '../../activities/kyb.ts';
import { RUN_LEVEL_FAILURE, BUG_FAILURE, recordFailureType, type ShareRef } from '../../contract/share-record.ts';
import { kybOwnerDecidedSignal, kybProgressQuery } from '../../contract/universal-kyb.ts';
import { retentionHoldChangedSignal, type RetentionStep } from '../../contract/retention.ts';
import { batchImportWorkflow, requirementBatchWorkflow, retentionWorkflow, syncImportWorkflow, universalKybWorkflow } from '../../workflows/index.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTimeSkipping } from '../helpers/infra.ts';
import { testEnv } from '../helpers/stack.ts';

type Calls = { name: string; args: unknown[] }[];
type StandIns = Record<string, (...args: never[]) => Promise<unknown>>;

describe('workflow branches with stand-in activities (time-skipping)', () => {
  let env: TestWorkflowEnvironment;
  const bundle = () => ({ codePath: testEnv('WORKFLOW_BUNDLE_PATH') });

  before(async () => {
    env = await startTimeSkipping();
  });
  after(async () => {
    await env?.teardown();
  });

  /**
   * Runs `start` with workers on a general and a provider queue of their own, whose activities are
   * the stand-ins (each call recorded, in order); returns the workflow's result or its failure. On
   * the file's time-skipping server, or on `on`.
   */
  async function withStandIns<T>(
    standIns: { general?: StandIns; provider?: StandIns },
    start: (queues: { general: string; provider: string }, calls: Calls) => Promise<T>,
    on: TestWorkflowEnvironment = env,
  ): Promise<{ result?: T; failure?: unknown; calls: Calls }> {
    const calls: Calls = [];
    const recorded = (fns: StandIns = {}) =>
      Object.fromEntries(
        Object.entries(fns).map(([name, fn]) => [
          name,
          (...args: never[]) => {
            calls.push({ name, args });
            return fn(...args);
          },
        ]),
      );
    const queues = { general: `general-${randomUUID()}`, provider: `provider-${randomUUID()}` };
    const general = await Worker.create({
      connection: on.nativeConnection,
      taskQueue: queues.general,
      workflowBundle: bundle(),
      activities: recorded(standIns.general),
    });
    // a worker needs something to run: the provider queue's only when there are provider stand-ins
    const provider = standIns.provider
      ? await Worker.create({ connection: on.nativeConnection, taskQueue: queues.provider, activities: recorded(standIns.provider) })
      : undefined;
    let result: T | undefined;
    let failure: unknown;
    const run = general.runUntil(async () => {
      try {
        result = await start(queues, calls);
      } catch (err) {
        failure = err;
      }
    });
    await (provider ? provider.runUntil(run) : run);
    return { result, failure, calls };
  }

  const syncImport = (standIns: { general?: StandIns; provider?: StandIns }) =>
    withStandIns(standIns, (queues) =>
      env.client.workflow.execute(syncImportWorkflow, {
        taskQueue: queues.general,
        workflowId: `sync-${randomUUID()}`,
        args: [{ requestId: randomUUID(), businessId: randomUUID(), providerTaskQueue: queues.provider }],
      }),
    );
  const names = (calls: Calls) => calls.map((c) => c.name);
  const failureType = (failure: unknown) => {
    assert.ok(failure instanceof WorkflowFailedError, `the run failed: ${String(failure)}`);
    return (failure.cause as ApplicationFailure | undefined)?.type;
  };

  describe('a shared record (sync import)', () => {
    it('succeeds on its first step and records no failure', async () => {
      const { result, calls } = await syncImport({
        provider: { processShare: async (): Promise<ShareOutcome> => ({ outcome: 'succeeded' }) },
        general: { failShare: async () => {} },
      });
      assert.deepEqual(result, { outcome: 'succeeded' });
      assert.deepEqual(names(calls), ['processShare']);
    });

    it('a token already used: finds the applicant (recoverShare) and takes its answer', async () => {
      const { result, calls } = await syncImport({
        provider: {
          processShare: async (): Promise<ShareOutcome> => ({ outcome: 'token_used' }),
          recoverShare: async (): Promise<ShareOutcome> => ({ outcome: 'failed', category: 'TOKEN_ALREADY_USED' }),
        },
      });
      assert.deepEqual(result, { outcome: 'failed', category: 'TOKEN_ALREADY_USED' });
      assert.deepEqual(names(calls), ['processShare', 'recoverShare']);
    });

    it('a provider that stays down: three attempts, then the record failed once with the category its last failure named', async () => {
      const { result, calls } = await syncImport({
        provider: {
          processShare: async () => {
            throw ApplicationFailure.retryable('provider down', recordFailureType('PROVIDER_UNAVAILABLE'));
          },
        },
        general: { failShare: async () => {} },
      });
      assert.deepEqual(result, { outcome: 'failed', category: 'PROVIDER_UNAVAILABLE' });
      assert.deepEqual(names(calls), ['processShare', 'processShare', 'processShare', 'failShare']);
      const ref = calls.at(-1)!.args[0] as ShareRef;
      assert.deepEqual([ref.kind, calls.at(-1)!.args[1]], ['sync', 'PROVIDER_UNAVAILABLE']);
    });

    it('credentials refused: the run fails as RunLevel and no record is failed', async () => {
      const { failure, calls } = await syncImport({
        provider: {
          processShare: async () => {
            throw ApplicationFailure.nonRetryable('401 from the provider', RUN_LEVEL_FAILURE);
          },
        },
        general: { failShare: async () => {} },
      });
      assert.equal(failureType(failure), RUN_LEVEL_FAILURE);
      assert.deepEqual(names(calls), ['processShare']);
    });

    it('a look-up that answers token_used again is a bug: the run fails as Bug, nothing recorded', async () => {
      const { failure, calls } = await syncImport({
        provider: {
          processShare: async (): Promise<ShareOutcome> => ({ outcome: 'token_used' }),
          recoverShare: async (): Promise<ShareOutcome> => ({ outcome: 'token_used' }),
        },
        general: { failShare: async () => {} },
      });
      assert.equal(failureType(failure), BUG_FAILURE);
      assert.deepEqual(names(calls), ['processShare', 'recoverShare']);
    });
  });

  describe('a batch run', () => {
    const input = (queues: { provider: string }) => ({
      batchId: randomUUID(),
      businessId: randomUUID(),
      providerTaskQueue: queues.provider,
      concurrency: 3,
      pageSize: 4,
      providerRetry: { maximumAttempts: 2, initialIntervalMs: 100 },
    });

    it('pages through the rows (a new run per page), each row once, then finishes the batch', async () => {
      const rows = Array.from({ length: 10 }, (_, i) => i + 1);
      const { result, calls } = await withStandIns(
        {
          general: {
            startBatch: async () => {},
            nextRows: async (_batchId: string, after: number, limit: number) => rows.filter((r) => r > after).slice(0, limit),
            finishBatch: async () => {},
            failShare: async () => {},
          },
          provider: { processShare: async (): Promise<ShareOutcome> => ({ outcome: 'succeeded' }) },
        },
        (queues) => env.client.workflow.execute(batchImportWorkflow, { taskQueue: queues.general, workflowId: `batch-${randomUUID()}`, args: [input(queues)] }),
      );
      assert.deepEqual(result, { status: 'completed' });
      const done = calls.filter((c) => c.name === 'processShare').map((c) => (c.args[0] as { rowNumber: number }).rowNumber);
      assert.deepEqual(
        [...done].sort((a, b) => a - b),
        rows,
        'each row once',
      );
      assert.deepEqual(
        calls.filter((c) => c.name === 'nextRows').map((c) => c.args[1]),
        [0, 4, 8, 10],
        'a page of four per run: three runs of rows, then the empty page that ends it',
      );
      assert.equal(names(calls).filter((n) => n === 'startBatch').length, 1, 'started once, not per run');
      assert.equal(names(calls).at(-1), 'finishBatch');
    });

    it("a row's exhausted retries fail that row only; the batch goes on", async () => {
      const { result, calls } = await withStandIns(
        {
          general: {
            startBatch: async () => {},
            nextRows: async (_b: string, after: number) => (after === 0 ? [1, 2, 3] : []),
            finishBatch: async () => {},
            failShare: async () => {},
          },
          provider: {
            processShare: async (ref: ShareRef) => {
              if (ref.kind === 'batch' && ref.rowNumber === 2) throw ApplicationFailure.retryable('down', recordFailureType('PROVIDER_UNAVAILABLE'));
              return { outcome: 'succeeded' };
            },
          },
        },
        (queues) => env.client.workflow.execute(batchImportWorkflow, { taskQueue: queues.general, workflowId: `batch-${randomUUID()}`, args: [input(queues)] }),
      );
      assert.deepEqual(result, { status: 'completed' });
      const failed = calls.filter((c) => c.name === 'failShare').map((c) => [(c.args[0] as { rowNumber: number }).rowNumber, c.args[1]]);
      assert.deepEqual(failed, [[2, 'PROVIDER_UNAVAILABLE']]);
      assert.equal(calls.filter((c) => c.name === 'processShare' && (c.args[0] as { rowNumber: number }).rowNumber === 2).length, 2, 'its two attempts');
    });

    it('credentials refused: the batch is failed with the reason and the run fails as RunLevel', async () => {
      const { failure, calls } = await withStandIns(
        {
          general: {
            startBatch: async () => {},
            nextRows: async () => [1],
            finishBatch: async () => {},
            failBatch: async () => {},
            failShare: async () => {},
          },
          provider: {
            processShare: async () => {
              throw ApplicationFailure.nonRetryable('401', RUN_LEVEL_FAILURE);
            },
          },
        },
        (queues) => env.client.workflow.execute(batchImportWorkflow, { taskQueue: queues.general, workflowId: `batch-${randomUUID()}`, args: [input(queues)] }),
      );
      assert.equal(failureType(failure), RUN_LEVEL_FAILURE);
      assert.deepEqual(names(calls), ['startBatch', 'nextRows', 'processShare', 'failBatch']);
      assert.match(String(calls.at(-1)!.args[1]), /PROVIDER_APP_TOKEN/, 'the reason names what to check');
    });
    it('canceled mid-page: the run ends canceled, the batch is neither failed nor finished', async () => {
      const releases: (() => void)[] = [];
      // a server of its own: the test server stops skipping time for good once an activity of a
      // canceled run is left behind, which would hold up every later test that skips time
      const own = await startTimeSkipping();
      try {
        const { failure, calls } = await withStandIns(
          {
            general: {
              startBatch: async () => {},
              nextRows: async () => [1, 2],
              finishBatch: async () => {},
              failBatch: async () => {},
              failShare: async () => {},
            },
            // the rows stay under way until the run is canceled, then end (no activity is left running on the server)
            provider: { processShare: () => new Promise<ShareOutcome>((resolve) => releases.push(() => resolve({ outcome: 'succeeded' }))) },
          },
          async (queues, seen) => {
            const handle = await own.client.workflow.start(batchImportWorkflow, {
              taskQueue: queues.general,
              workflowId: `batch-${randomUUID()}`,
              args: [input(queues)],
            });
            await eventually('a row under way', () => seen.some((c) => c.name === 'processShare'));
            await handle.cancel();
            try {
              return await handle.result();
            } finally {
              for (const release of releases) release();
            }
          },
          own,
        );
        assert.ok(failure instanceof WorkflowFailedError && failure.cause instanceof CancelledFailure, `canceled: ${String(failure)}`);
        assert.deepEqual(
          names(calls).filter((n) => !['processShare'].includes(n)),
          ['startBatch', 'nextRows'],
        );
      } finally {
        await own.teardown();
      }
    });
  });

  describe('a requirement batch', () => {
    const input = () => ({ batchId: randomUUID(), businessId: randomUUID(), pageSize: 6, chunkSize: 4, concurrency: 2 });
    const steps = (handle: (batchId: string, lines: number[]) => Promise<void>) => ({
      startRequirementBatch: async () => {},
      nextRequirementRows: async (_b: string, after: number, limit: number) => [1, 2, 3, 4, 5, 6, 7].filter((r) => r > after).slice(0, limit),
      handleRequirementRecords: handle,
      finishRequirementBatch: async () => {},
      failRequirementBatch: async () => {},
    });

    it('handles each page in steps of chunkSize records, each record once, on the same engine', async () => {
      const { result, calls } = await withStandIns({ general: steps(async () => {}) }, (queues) =>
        env.client.workflow.execute(requirementBatchWorkflow, { taskQueue: queues.general, workflowId: `rb-${randomUUID()}`, args: [input()] }),
      );
      assert.deepEqual(result, { status: 'completed' });
      // the two steps of a page run at once (concurrency 2): their order is the server's
      const chunks = calls.filter((c) => c.name === 'handleRequirementRecords').map((c) => JSON.stringify(c.args[1]));
      assert.deepEqual(chunks.sort(), ['[1,2,3,4]', '[5,6]', '[7]'], 'a page of six in steps of four, then the seventh on the next run');
      assert.deepEqual(
        calls.filter((c) => c.name === 'nextRequirementRows').map((c) => c.args[1]),
        [0, 6, 7],
      );
    });

    it('a step whose retries are spent fails the batch with the reason, and the run', async () => {
      const { failure, calls } = await withStandIns(
        {
          general: steps(async () => {
            throw ApplicationFailure.nonRetryable('the database refused', 'StepFailed');
          }),
        },
        (queues) => env.client.workflow.execute(requirementBatchWorkflow, { taskQueue: queues.general, workflowId: `rb-${randomUUID()}`, args: [input()] }),
      );
      assert.ok(failure instanceof WorkflowFailedError);
      const failed = calls.filter((c) => c.name === 'failRequirementBatch');
      assert.equal(failed.length, 1);
      assert.equal(failed[0]!.args[1], 'a step failed after its retries: the database refused');
      assert.ok(!names(calls).includes('finishRequirementBatch'));
    });
  });

  describe('universal KYB', () => {
    const DAY = 86_400_000;
    const kyb = (standIns: StandIns, during?: (handle: WorkflowHandle<typeof universalKybWorkflow>, calls: Calls) => Promise<void>) =>
      withStandIns({ general: standIns }, async (queues, calls) => {
        const handle = await env.client.workflow.start(universalKybWorkflow, {
          taskQueue: queues.general,
          workflowId: `kyb-${randomUUID()}`,
          args: [
            {
              submissionId: randomUUID(),
              entityId: randomUUID(),
              deadlineAt: new Date((await env.currentTimeMs()) + 2 * DAY).toISOString() /* the server's clock, not ours */,
            },
          ],
        });
        await during?.(handle, calls);
        return handle.result();
      });
    const settled = async (): Promise<KybSettled> => ({ outcome: 'decided', status: 'APPROVED', eventId: randomUUID() });

    it('owners never decided: settled once at its deadline, two days on (looking every five minutes meanwhile, across a continue-as-new)', async () => {
      const started = await env.currentTimeMs();
      let looks = 0;
      const { result, calls } = await kyb({
        kybReadiness: async (): Promise<KybReadiness> => {
          looks++;
          return { status: 'waiting', ready: false, owners: 2, ownersDecided: 1 };
        },
        settleUniversalKyb: async (): Promise<KybSettled> => ({ outcome: 'expired', status: 'REJECTED', eventId: randomUUID() }),
      });
      assert.deepEqual(result, { outcome: 'expired', status: 'REJECTED' });
      assert.equal(names(calls).filter((n) => n === 'settleUniversalKyb').length, 1);
      const skipped = (await env.currentTimeMs()) - started;
      assert.ok(skipped >= 2 * DAY - 60_000, `two days passed on the server's clock (${skipped} ms)`);
      // one look a recheck interval (5 min): 576 over two days, more than one run's 500
      assert.ok(looks >= 576 && looks <= 580, `looked ${looks} times`);
    });

    it('an owner decided: the signal wakes it and it settles at once, without waiting for its next look', async () => {
      let ready = false;
      const { result, calls } = await kyb(
        {
          kybReadiness: async (): Promise<KybReadiness> => ({ status: 'waiting', ready, owners: 1, ownersDecided: ready ? 1 : 0 }),
          settleUniversalKyb: settled,
        },
        async (handle, seen) => {
          await eventually('the first look', () => seen.some((c) => c.name === 'kybReadiness'));
          ready = true;
          await handle.signal(kybOwnerDecidedSignal, { ownerEntityId: randomUUID() });
          // time is not skipped here (only while a result is awaited): without the signal its next
          // look would be five real minutes away, and this would time out
          await eventually('settled', async () => (await handle.query(kybProgressQuery)).stage === 'settled', { timeoutMs: 20_000 });
        },
      );
      assert.deepEqual(result, { outcome: 'decided', status: 'APPROVED' });
      assert.deepEqual(names(calls), ['kybReadiness', 'kybReadiness', 'settleUniversalKyb'], 'one look, woken, one more, settled');
    });

    it('superseded by a change to the profile: ends without a decision', async () => {
      const { result, calls } = await kyb({
        kybReadiness: async (): Promise<KybReadiness> => ({ status: 'superseded', ready: false, owners: 1, ownersDecided: 0 }),
        settleUniversalKyb: settled,
      });
      assert.deepEqual(result, { outcome: 'superseded' });
      assert.deepEqual(names(calls), ['kybReadiness']);
    });
  });
  describe('retention', () => {
    const YEAR = 365.25 * 86_400_000;
    const retention = (
      step: (entityId: string, now: string) => Promise<RetentionStep>,
      during?: (handle: WorkflowHandle<typeof retentionWorkflow>, calls: Calls) => Promise<void>,
    ) =>
      withStandIns({ general: { retentionStep: step } }, async (queues, calls) => {
        const handle = await env.client.workflow.start(retentionWorkflow, {
          taskQueue: queues.general,
          workflowId: `retention-${randomUUID()}`,
          args: [{ entityId: randomUUID() }],
        });
        await during?.(handle, calls);
        return handle.result();
      });

    it('sleeps until the purge date five years on, looking every thirty days across continue-as-new runs, and purges once', async () => {
      const purgeAt = (await env.currentTimeMs()) + 5 * YEAR;
      const { result, calls } = await retention(async (_id, now) =>
        Date.parse(now) >= purgeAt ? { done: true, purged: true } : { done: false, at: new Date(purgeAt).toISOString() },
      );
      assert.deepEqual(result, { purged: true });
      const looks = calls.length;
      // 5 years / 30 days: 61 sleeps, then the look that purges (more than a run's 50 looks)
      assert.ok(looks >= 61 && looks <= 63, `looked ${looks} times`);
      assert.ok(Date.parse(calls.at(-1)!.args[1] as string) >= purgeAt, 'not a day before its date');
      assert.ok(Date.parse(calls.at(-2)!.args[1] as string) < purgeAt);
    });

    it('held: looks again at once when the hold is released (the signal), not at its next thirty-day look', async () => {
      let held = true;
      const { result, calls } = await retention(
        async () => (held ? { done: false, at: null } : { done: true, purged: true }),
        async (handle, seen) => {
          await eventually('the first look', () => seen.length === 1);
          held = false;
          await handle.signal(retentionHoldChangedSignal);
          // no time is skipped here: only the signal can bring the second look within the wait
          await eventually('the look after the release', () => seen.length === 2, { timeoutMs: 20_000 });
        },
      );
      assert.deepEqual(result, { purged: true });
      assert.equal(calls.length, 2);
    });

    it('held: a release signalled while a look is under way wakes the wait that follows it (the look answered "held")', async () => {
      let held = true;
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      const { result, calls } = await retention(
        async () => {
          if (!held) return { done: true, purged: true };
          await answered; // the look saw the hold; its answer comes after the release's signal is in the history
          return { done: false, at: null };
        },
        async (handle, seen) => {
          await eventually('the first look under way', () => seen.length === 1);
          held = false;
          await handle.signal(retentionHoldChangedSignal);
          answer();
          // the signal and the look's answer reach the workflow together, the signal handled first: without
          // it counted, the wait after the look would have forgotten it and slept thirty days
          await eventually('the look after the release', () => seen.length === 2, { timeoutMs: 20_000 });
        },
      );
      assert.deepEqual(result, { purged: true });
      assert.equal(calls.length, 2);
    });
  });
});
