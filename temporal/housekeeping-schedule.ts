// The Temporal Schedule that runs housekeeping (contract/housekeeping.ts), created or brought up to
// date by every worker start.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { HOUSEKEEPING_INTERVAL, HOUSEKEEPING_RUN, HOUSEKEEPING_SCHEDULE_ID } from '../contract/housekeeping.ts';
import type { Config } from '../runtime/config.ts';

/** Creates (or brings up to date) the schedule that runs housekeeping: a run an hour, a pass a minute. */
export async function ensureHousekeepingSchedule(client: Client, config: Config): Promise<void> {
  const spec = { intervals: [{ every: HOUSEKEEPING_INTERVAL }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'housekeepingWorkflow',
    taskQueue: config.temporal.taskQueue,
    args: [HOUSEKEEPING_RUN],
    staticSummary: `Housekeeping: ${HOUSEKEEPING_RUN.passes} passes, one a minute (reconciler, clean-up)`,
    // a run stranded on a queue no worker polls (TASK_QUEUE renamed) ends, and the buffered next run starts
    workflowRunTimeout: '70 minutes' as const,
  };
  // a run lasts about its interval: the next waits for it (BUFFER_ONE) instead of being skipped
  const policies = { overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow: '1 minute' } as const;
  try {
    await client.schedule.create({
      scheduleId: HOUSEKEEPING_SCHEDULE_ID,
      spec,
      action,
      policies,
      state: { triggerImmediately: true }, // the first run now, not an hour from now
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(HOUSEKEEPING_SCHEDULE_ID).update((prev) => ({ ...prev, spec, action, policies: { ...prev.policies, ...policies } }));
  }
}
