// The reconciler, run by housekeeping every minute: whatever a crash, an unavailable Temporal or an
// operator left without a live workflow gets one again. PostgreSQL says what should be running;
// starts are idempotent (temporal/starters.ts), so a run that is alive is left alone.
import type { Logger } from 'pino';
import { staleUnfinishedBatches } from '../store/batches.ts';
import { staleRequirementBatches } from '../store/requirement-batches.ts';
import { overdueWaitingSubmissions } from '../store/kyb.ts';
import type { KybSubmissionRun } from '../contract/universal-kyb.ts';
import type { Db } from '../store/db.ts';
import { adoptOverdueWorkflowDeliveries } from '../store/deliveries.ts';
import { reconcileHeldDeliveries } from '../store/subscription-health.ts';
import { issueMissingSecrets, resealSecrets } from '../store/subscriptions.ts';
import { createSecretBox, type SealingKey } from '../domain/secret-box.ts';
import { newSubscriptionSecret } from '../domain/subscription-secret.ts';

/** A delivery an earlier release's retry workflow owns, this late, has lost its workflow (a live one attempts within seconds of the due time). */
export const OVERDUE_DELIVERY_GRACE_MS = 2 * 60_000;
/** An unfinished batch untouched this long is checked for a live workflow. */
export const STALE_BATCH_MS = 60_000;
/** A KYB submission ready (or past its deadline) this long without being settled has lost its wake or its workflow. */
export const OVERDUE_KYB_GRACE_MS = 60_000;

export type ReconcileDeps = {
  db: Db;
  log: Logger;
  /** The payload codec ring, which seals the secrets given to subscriptions made before secrets existed. */
  webhookKeys: { sealing: readonly SealingKey[] };
  /** Whether a batch's run is running (temporal/runs.ts). */
  runs: { isBatchRunRunning(batchId: string, run: number): Promise<boolean>; isRequirementBatchRunRunning(batchId: string, run: number): Promise<boolean> };
  start: {
    batchRun(batchId: string, run: number, businessId: string): Promise<void>;
    requirementBatchRun(batchId: string, run: number, businessId: string): Promise<void>;
    webhookDispatcher(): Promise<void>;
    kybRecheck(submission: KybSubmissionRun): Promise<void>;
  };
};

export function createReconcileActivities(deps: ReconcileDeps) {
  const { db, log, runs, start } = deps;
  type Lost = { batchId: string; run: number; businessId: string };
  /** Starts again the run of each unfinished batch of a kind whose workflow is not running; how many it started. */
  const restartLost = async (
    stale: (db: Db, olderThanMs: number) => Promise<Lost[]>,
    isRunning: (batchId: string, run: number) => Promise<boolean>,
    restart: (batchId: string, run: number, businessId: string) => Promise<void>,
    kind: string,
  ): Promise<number> => {
    let restarted = 0;
    for (const b of await stale(db, STALE_BATCH_MS)) {
      if (await isRunning(b.batchId, b.run)) continue;
      await restart(b.batchId, b.run, b.businessId);
      log.warn({ batchId: b.batchId, run: b.run }, `reconciler: restarted the workflow of an unfinished ${kind}`);
      restarted++;
    }
    return restarted;
  };
  /**
   * Subscriptions' secrets: one for each subscription made before secrets existed (all of them,
   * 500 a statement), and those sealed under an older key of the payload codec ring sealed again
   * under its first, so the older key can be retired.
   */
  async function reconcileSecrets(): Promise<{ issued: number; resealed: number }> {
    const box = createSecretBox(deps.webhookKeys.sealing);
    let issued = 0;
    for (let n = -1; n !== 0 && issued < 100_000; issued += n) n = await issueMissingSecrets(db, (id) => box.seal(id, newSubscriptionSecret()));
    if (issued) log.info({ count: issued }, 'reconciler: gave a secret to subscriptions made before secrets existed');
    let resealed = 0;
    for (let n = -1; n !== 0 && resealed < 100_000;) {
      const r = await resealSecrets(db, box.sealingPrefix, (id, sealed) => box.seal(id, box.open(id, sealed)));
      if (r.unopened.length) log.error({ subscriptions: r.unopened }, 'reconciler: subscription secrets that no key of the payload codec ring opens');
      n = r.resealed;
      resealed += n;
    }
    if (resealed) log.info({ count: resealed }, 'reconciler: sealed subscription secrets again under the first key of the payload codec ring');
    return { issued, resealed };
  }

  return {
    /**
     * Mends held deliveries that do not match their subscription's health (store/subscription-health.ts),
     * hands deliveries whose retry workflow (an earlier release's) is lost to the dispatchers, and
     * gives a secret to each subscription made before secrets existed; returns how many it touched.
     */
    async reconcileDeliveries(): Promise<number> {
      await reconcileSecrets();
      const mended = await reconcileHeldDeliveries(db);
      if (mended) log.warn({ count: mended }, 'reconciler: held, released or canceled deliveries to match their subscription');
      const adopted = await adoptOverdueWorkflowDeliveries(db, OVERDUE_DELIVERY_GRACE_MS);
      if (adopted) log.warn({ count: adopted }, "reconciler: deliveries of lost retry workflows (an earlier release's) now wait for the dispatchers");
      return adopted + mended;
    },

    /** Makes sure the webhook dispatcher workflow runs. */
    ensureWebhookDispatcher: () => start.webhookDispatcher(),

    /** Wakes (or starts again) the workflows of KYB submissions that should have been settled by now. */
    async reconcileKybSubmissions(): Promise<number> {
      const overdue = await overdueWaitingSubmissions(db, OVERDUE_KYB_GRACE_MS);
      for (const s of overdue) await start.kybRecheck(s);
      if (overdue.length) log.warn({ count: overdue.length }, 'reconciler: woke KYB submissions that should have been settled');
      return overdue.length;
    },

    /** Restarts unfinished batches whose workflow is missing or closed (never started, terminated, failed). */
    reconcileBatches: () => restartLost(staleUnfinishedBatches, runs.isBatchRunRunning, start.batchRun, 'batch'),

    /** The same for batches of requirement submissions. */
    reconcileRequirementBatches: () => restartLost(staleRequirementBatches, runs.isRequirementBatchRunRunning, start.requirementBatchRun, 'requirement batch'),
  };
}
