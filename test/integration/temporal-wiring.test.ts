// The worker polls its task queue with the real workflow bundle, and the housekeeping schedule and
// workflow do their job against the real database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HOUSEKEEPING_RUN, HOUSEKEEPING_SCHEDULE_ID } from '../../contract/housekeeping.ts';
import { housekeepingWorkflow } from '../../workflows/index.ts';
import { ensureHousekeepingSchedule } from '../../temporal/housekeeping-schedule.ts';
import { takeRateToken } from '../../store/rate-limit.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

describe('Temporal wiring', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ workers: true });
  });
  after(() => stack.close());

  it('has workers polling the general queue (workflows, activities) and the provider queue (activities)', async () => {
    const svc = stack.temporal.workflowService;
    const deadline = Date.now() + 20_000;
    const describe = (name: string, taskQueueType: number /* 1 workflow, 2 activity */) =>
      svc.describeTaskQueue({ namespace: 'default', taskQueue: { name, kind: 1 /* NORMAL */ }, taskQueueType });
    for (;;) {
      const t = stack.config.temporal;
      const [wf, act, provider] = await Promise.all([describe(t.taskQueue, 1), describe(t.taskQueue, 2), describe(t.providerTaskQueue, 2)]);
      if (wf.pollers.length > 0 && act.pollers.length > 0 && provider.pollers.length > 0) break;
      assert.ok(Date.now() < deadline, 'no pollers seen within 20 s');
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it('runs housekeeping, which purges request-count windows older than a minute and keeps the current ones', async () => {
    const bucket = `test-${Date.now()}`;
    await takeRateToken(stack.db, bucket, 10, 1000, Date.now() - 5 * 60_000);
    await takeRateToken(stack.db, bucket, 10, 1000, Date.now());
    const result = await stack.temporal.workflow.execute('housekeepingWorkflow', {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `housekeeping-test-${bucket}`,
    });
    assert.ok((result as { rateLimitWindowsPurged: number }).rateLimitWindowsPurged >= 1);
    const left = await stack.db.query('SELECT window_start FROM rate_limit_windows WHERE bucket = $1', [bucket]);
    assert.equal(left.length, 1);
  });

  it('creates the housekeeping schedule once and updates it on later starts', async () => {
    await ensureHousekeepingSchedule(stack.temporal, stack.config);
    await ensureHousekeepingSchedule(stack.temporal, stack.config);
    const description = await stack.temporal.schedule.getHandle(HOUSEKEEPING_SCHEDULE_ID).describe();
    assert.equal(description.action.type, 'startWorkflow');
    assert.equal(description.action.workflowType, 'housekeepingWorkflow');
    assert.deepEqual(description.action.args, [HOUSEKEEPING_RUN], 'one run an hour, a pass a minute');
    assert.deepEqual(
      description.spec.intervals?.map((i) => i.every),
      [3_600_000],
    );
    assert.equal(description.action.type === 'startWorkflow' && description.action.workflowRunTimeout, 70 * 60_000, 'a stranded run ends');
  });

  it('makes each housekeeping pass of a run, a given interval apart', async () => {
    const handle = await stack.temporal.workflow.start(housekeepingWorkflow, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `housekeeping-passes-${Date.now()}`,
      args: [{ passes: 3, everyMs: 50 }],
    });
    const result = await handle.result();
    assert.deepEqual(result.failedSteps, []);
    const scheduled = (await handle.fetchHistory()).events?.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'purgeRateLimitWindows',
    ).length;
    assert.equal(scheduled, 3);
  });
});
