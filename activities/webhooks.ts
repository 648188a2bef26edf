// Webhook activities of the webhook task queue: the dispatcher (every attempt — first attempts,
// redeliveries, retries — many per activity), and the two steps of the retired per-delivery retry
// workflow, kept so that runs an earlier release started end cleanly (their delivery is no longer
// theirs: they end at their next step). An attempt's HTTP outcome is a value, never a thrown error:
// only our own infrastructure failures throw (and are retried).
import { Context } from '@temporalio/activity';
import { runOfRetryWorkflowId } from '../contract/webhook-retry.ts';
import type { Logger } from 'pino';
import type { Db } from '../store/db.ts';
import { cancelDeliveries, deliveryTarget, recordAttempts, waitingDeliveryDueIn } from '../store/deliveries.ts';
import { createWebhookDispatcher, type DispatcherSettings, type DispatchStats } from './webhook-dispatcher.ts';
import { attemptRecord, type WebhookSender } from './webhook-send.ts';
import { countAttempt, countHealthChanges } from './activity-metrics.ts';

export type WebhookDeps = {
  db: Db;
  log: Logger;
  send: WebhookSender;
  dispatcher: DispatcherSettings;
  /** How long a subscription fails continuously before it is disabled (WEBHOOK_DISABLE_AFTER_MS). */
  disableAfterMs: number;
};

export type RetryAttempt = { status: 'pending' | 'delivered' | 'failed' | 'canceled'; nextDelayMs: number | null };

export function createWebhookActivities(deps: WebhookDeps) {
  const { db, log } = deps;

  const dispatcher = createWebhookDispatcher({ db, log, send: deps.send, settings: deps.dispatcher, disableAfterMs: deps.disableAfterMs });

  /** The run of the retry workflow this activity works for (undefined outside one, as in tests that call it directly). */
  const retryRun = (): number | undefined => {
    try {
      return runOfRetryWorkflowId(Context.current().info.workflowExecution?.workflowId ?? '');
    } catch {
      return undefined;
    }
  };

  return {
    /**
     * Long-lived: claims due deliveries and sends them until `runForMs` passes or the activity is
     * canceled (worker shutdown, workflow canceled), heartbeating all along.
     */
    async runWebhookDispatcher(runForMs: number): Promise<DispatchStats> {
      const ctx = Context.current();
      return dispatcher.run({ signal: ctx.cancellationSignal, runForMs, heartbeat: () => ctx.heartbeat() });
    },

    /** A retry workflow's first step (runs of an earlier release): ms until its delivery is due, or null when it has nothing to do. */
    deliveryDueIn: (deliveryId: string) => waitingDeliveryDueIn(db, deliveryId, retryRun()),

    /** One attempt of a delivery a retry workflow of an earlier release owns; says what follows (another wait, or the end). */
    async attemptDelivery(deliveryId: string): Promise<RetryAttempt> {
      const target = await deliveryTarget(db, deliveryId);
      if (!target || target.status !== 'pending') return { status: (target?.status ?? 'canceled') as RetryAttempt['status'], nextDelayMs: null };
      // back with the dispatcher (a redelivery, or its subscription answered again), held (its
      // subscription is disabled), or a later run's: another run or no one attempts it now
      const run = retryRun();
      if (target.mode !== 'workflow' || (run !== undefined && run !== target.run)) return { status: 'pending', nextDelayMs: null };
      if (target.url === null) {
        await cancelDeliveries(db, [deliveryId]); // the subscription was deleted
        return { status: 'canceled', nextDelayMs: null };
      }
      const record = attemptRecord(target, await deps.send({ ...target, url: target.url }));
      const { healthChanges, held, superseded } = await recordAttempts(db, [record], { disableAfterMs: deps.disableAfterMs });
      countAttempt(record.next.status, target.createdAt);
      countHealthChanges(healthChanges);
      if (record.next.status !== 'pending') return { status: record.next.status, nextDelayMs: null };
      // held (its subscription is disabled) or superseded while it was sent (a later run owns it): this run is over
      return { status: 'pending', nextDelayMs: held.has(deliveryId) || superseded.has(deliveryId) ? null : record.next.delayMs };
    },
  };
}
