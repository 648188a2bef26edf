// The Temporal Schedules of the service, created or brought up to date by every worker start:
// housekeeping (contract/housekeeping.ts) and the audit chain's signed checkpoints
// (contract/audit-checkpoint.ts). A schedule runs exactly one workflow per interval however many
// processes there are, and a missed run shows in the Web UI.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import { AUDIT_CHECKPOINT_SCHEDULE_ID } from '../contract/audit-checkpoint.ts';
import { HOUSEKEEPING_INTERVAL, HOUSEKEEPING_RUN, HOUSEKEEPING_SCHEDULE_ID } from '../contract/housekeeping.ts';
import type { Config } from '../runtime/config.ts';

/** Creates the schedule (its first run now), or brings its spec, action and policies up to date. */
async function ensureSchedule(
  client: Client,
  scheduleId: string,
  every: string,
  action: ScheduleOptionsStartWorkflowAction<never> | Record<string, unknown>,
): Promise<void> {
  const spec = { intervals: [{ every: every as `${number} ${'minutes' | 'hour'}` }] };
  // a run lasts about its interval at most: the next waits for it (BUFFER_ONE) instead of being skipped
  const policies = { overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow: '1 minute' } as const;
  const a = { type: 'startWorkflow' as const, ...action } as ScheduleOptionsStartWorkflowAction<never>;
  try {
    await client.schedule.create({ scheduleId, spec, action: a, policies, state: { triggerImmediately: true } });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action: a, policies: { ...prev.policies, ...policies } }));
  }
}

/** Housekeeping: a run an hour, a pass a minute. */
export async function ensureHousekeepingSchedule(client: Client, config: Config): Promise<void> {
  await ensureSchedule(client, HOUSEKEEPING_SCHEDULE_ID, HOUSEKEEPING_INTERVAL, {
    workflowType: 'housekeepingWorkflow',
    taskQueue: config.temporal.taskQueue,
    args: [HOUSEKEEPING_RUN],
    staticSummary: `Housekeeping: ${HOUSEKEEPING_RUN.passes} passes, one a minute (reconciler, clean-up)`,
    // a run stranded on a queue no worker polls (TASK_QUEUE renamed) ends, and the buffered next run starts
    workflowRunTimeout: '70 minutes',
  });
}

/** Signed checkpoints of every business's audit chain head that moved, every AUDIT_CHECKPOINT_EVERY_MINUTES. */
export async function ensureAuditCheckpointSchedule(client: Client, config: Config): Promise<void> {
  const every = config.auditCheckpoints.everyMinutes;
  await ensureSchedule(client, AUDIT_CHECKPOINT_SCHEDULE_ID, `${every} minutes`, {
    workflowType: 'auditCheckpointWorkflow',
    taskQueue: config.temporal.taskQueue,
    args: [],
    staticSummary: `Audit checkpoints: every business's chain head that moved, signed and stored (every ${every} min)`,
    workflowRunTimeout: `${every + 10} minutes`,
  });
}

/** Every schedule of the service. */
export async function ensureSchedules(client: Client, config: Config): Promise<void> {
  await ensureHousekeepingSchedule(client, config);
  await ensureAuditCheckpointSchedule(client, config);
}
