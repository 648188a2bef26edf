// The reconciler, run by housekeeping every minute: whatever a crash, an unavailable Temporal or an
// operator left without a live workflow gets one again. PostgreSQL says what should be running;
// starts are idempotent (runtime/starters.ts), so a run that is alive is left alone.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { staleUnfinishedBatches } from '../store/batches.ts';
import { overdueWaitingSubmissions } from '../store/kyb.ts';
import type { KybWaker } from './kyb.ts';
import { deliveryTags, type DeliveryTagsRow } from '../store/deliveries.ts';
import type { Db } from '../store/db.ts';
import { overdueWaitingDeliveries } from '../store/deliveries.ts';
import { batchWorkflowId } from '../contract/workflows.ts';

/** A waiting delivery this late has lost its retry workflow (a live one attempts within seconds of the due time). */
export const OVERDUE_DELIVERY_GRACE_MS = 2 * 60_000;
/** An unfinished batch untouched this long is checked for a live workflow. */
export const STALE_BATCH_MS = 60_000;
/** A KYB submission ready (or past its deadline) this long without being settled has lost its wake or its workflow. */
export const OVERDUE_KYB_GRACE_MS = 60_000;

export type ReconcileDeps = {
  db: Db;
  log: Logger;
  temporal: Client;
  start: {
    batchRun(batchId: string, run: number, businessId: string): Promise<void>;
    deliveryRetry(deliveryId: string, run: number, about: DeliveryTagsRow): Promise<void>;
    webhookDispatcher(): Promise<void>;
    kybWake: KybWaker;
  };
};

/** Starts a delivery's retry workflow, described by its event's business, entity and subscription (a delivery gone since needs none). */
export async function startDeliveryRetry(deps: Pick<ReconcileDeps, 'db' | 'start'>, deliveryId: string, run: number): Promise<void> {
  const about = await deliveryTags(deps.db, deliveryId);
  if (about) await deps.start.deliveryRetry(deliveryId, run, about);
}

export function createReconcileActivities(deps: ReconcileDeps) {
  const { db, log, temporal, start } = deps;
  return {
    /** Starts the retry workflows of overdue waiting deliveries; returns how many it (re)started. */
    async reconcileDeliveries(): Promise<number> {
      const overdue = await overdueWaitingDeliveries(db, OVERDUE_DELIVERY_GRACE_MS);
      for (const d of overdue) await startDeliveryRetry(deps, d.deliveryId, d.run);
      if (overdue.length) log.warn({ count: overdue.length }, 'reconciler: restarted retry workflows of overdue deliveries');
      return overdue.length;
    },

    /** Makes sure the webhook dispatcher workflow runs. */
    ensureWebhookDispatcher: () => start.webhookDispatcher(),

    /** Wakes (or starts again) the workflows of KYB submissions that should have been settled by now. */
    async reconcileKybSubmissions(): Promise<number> {
      const overdue = await overdueWaitingSubmissions(db, OVERDUE_KYB_GRACE_MS);
      for (const s of overdue) await start.kybWake(s, { reason: 'reconciled' });
      if (overdue.length) log.warn({ count: overdue.length }, 'reconciler: woke KYB submissions that should have been settled');
      return overdue.length;
    },

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
        await start.batchRun(b.batchId, b.run, b.businessId);
        log.warn({ batchId: b.batchId, run: b.run }, 'reconciler: restarted the workflow of an unfinished batch');
        restarted++;
      }
      return restarted;
    },
  };
}
