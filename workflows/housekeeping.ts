// Periodic clean-up of short-lived rows, run by a Temporal Schedule so that exactly one run happens
// per interval however many API and worker processes there are, and a missed run shows in the UI.
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';

const { purgeRateLimitWindows, dispatchStragglers } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5, initialInterval: '1 second' },
});

export async function housekeepingWorkflow(): Promise<{ rateLimitWindowsPurged: number; eventsDispatched: number }> {
  const rateLimitWindowsPurged = await purgeRateLimitWindows();
  const eventsDispatched = await dispatchStragglers();
  return { rateLimitWindowsPurged, eventsDispatched };
}
