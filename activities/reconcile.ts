// The reconciler, run by housekeeping every minute: whatever a crash, an unavailable Temporal or an
// operator left without a live workflow gets one again. PostgreSQL says what should be running;
// starts are idempotent (runtime/starters.ts), so a run that is alive is left alone.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { staleUnfinishedBatches } from '../store/batches.ts';
import type { Db } from '../store/db.ts';
import { overdueWaitingDeliveries } from '../store/webhooks.ts';
import { batchWorkflowId } from '../contract/workflows.ts';

/** A waiting delivery this late has lost its retry workflow (a live one attempts within seconds of the due time). */
export const OVERDUE_DELIVERY_GRACE_MS = 2 * 60_000;
/** An unfinished batch untouched this long is checked for a live workflow. */
export const STALE_BATCH_MS = 60_000;

export type ReconcileDeps = {
  db: Db;
  log: Logger;
  temporal: Client;
  start: {
    batchRun(batchId: string, run: number): Promise<void>;
    deliveryRetry(deliveryId: string, run: number): Promise<void>;
    webhookDispatcher(): Promise<void>;
  };
};

export function createReconcileActivities(deps: ReconcileDeps) {
  const { db, log, temporal, start } = deps;
  return {
    /** Starts the retry workflows of overdue waiting deliveries; returns how many it (re)started. */
    async reconcileDeliveries(): Promise<number> {
      const overdue = await overdueWaitingDeliveries(db, OVERDUE_DELIVERY_GRACE_MS);
      for (const d of overdue) await start.deliveryRetry(d.deliveryId, d.run);
      if (overdue.length) log.warn({ count: overdue.length }, 'reconciler: restarted retry workflows of overdue deliveries');
      return overdue.length;
    },

    /** Makes sure the webhook dispatcher workflow runs. */
    ensureWebhookDispatcher: () => start.webhookDispatcher(),

    /** Restarts unfinished batches whose workflow is missing or closed (never started, terminated, failed). */
    async reconcileBatches(): Promise<number> {
      let restarted = 0;
      for (const b of await staleUnfinishedBatches(db, STALE_BATCH_MS)) {
        let running = false;
        try {
          const d = await temporal.workflow.getHandle(batchWorkflowId(b.batchId, b.run)).describe();
          running = d.status.name === 'RUNNING';
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
        if (running) continue;
        await start.batchRun(b.batchId, b.run);
        log.warn({ batchId: b.batchId, run: b.run }, 'reconciler: restarted the workflow of an unfinished batch');
        restarted++;
      }
      return restarted;
    },
  };
}
