// One sealed record's retention (issue 21): sleeps until its purge date (years, durably), asks the
// store whether the record may go — no legal hold binding it — and purges it; a hold placed or
// released wakes it to look again. It never sleeps longer than RETENTION_RECHECK_MS at once, so a
// lost hold signal delays a purge by at most that; a long wait continues as new to keep its history short.
import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import { RETENTION_RECHECK_MS, retentionHoldChangedSignal, type RetentionInput, type RetentionResult } from '../contract/retention.ts';
import type { GeneralActivities } from '../activities/index.ts';
import { setVouchStatus } from './status.ts';

const a = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes' },
});

/** Looks after this many checks continue as a new run. */
const CHECKS_PER_RUN = 50;

export async function retentionWorkflow(input: RetentionInput): Promise<RetentionResult> {
  // counted, not a flag: a hold changed while a look is under way (its signal handled before the look's
  // result, in the same activation) still wakes the wait that follows it
  let changes = 0;
  setHandler(retentionHoldChangedSignal, () => void changes++);
  for (let check = 0; check < CHECKS_PER_RUN; check++) {
    const seen = changes;
    const step = await a.retentionStep(input.entityId, new Date(Date.now()).toISOString());
    if (step.done) {
      setVouchStatus(step.purged ? 'purged' : 'completed');
      return { purged: step.purged };
    }
    setVouchStatus(step.at === null ? 'held' : 'sealed');
    const untilDue = step.at === null ? RETENTION_RECHECK_MS : Math.min(Date.parse(step.at) - Date.now(), RETENTION_RECHECK_MS);
    await condition(() => changes !== seen, Math.max(untilDue, 1000));
  }
  return continueAsNew<typeof retentionWorkflow>(input);
}
