// What the API and the reconciler ask of runs that already exist: cancel one, see whether one is
// running, and whether Temporal answers at all; and the codec the client encrypts payloads with (for
// the codec endpoint). Starting and messaging runs is temporal/starters.ts.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { batchWorkflowId } from '../contract/batch-import.ts';
import { webhookRetryWorkflowId } from '../contract/webhook-retry.ts';

export function createRuns(client: Client) {
  /** Cancels a run; a run that is gone is already what was asked. */
  const cancel = async (workflowId: string): Promise<void> => {
    await client.workflow
      .getHandle(workflowId)
      .cancel()
      .catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      });
  };
  return {
    /** Stops a batch's run (the batch is canceled in PostgreSQL first; this only saves its empty steps). */
    cancelBatchRun: (batchId: string, run: number) => cancel(batchWorkflowId(batchId, run)),

    /** Stops a delivery's retry workflow (the delivery is canceled in PostgreSQL first). */
    cancelDeliveryRetry: (deliveryId: string, run: number) => cancel(webhookRetryWorkflowId(deliveryId, run)),

    /** Whether the batch's run is running now (false when it closed or never started). */
    async isBatchRunRunning(batchId: string, run: number): Promise<boolean> {
      try {
        return (await client.workflow.getHandle(batchWorkflowId(batchId, run)).describe()).status.name === 'RUNNING';
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      }
    },

    /**
     * Asks the frontend for its system info by `deadline` (ms since the epoch); the client's own
     * retries of an unanswered call stop with it instead of going on after the answer.
     */
    async ping(deadline: number): Promise<void> {
      await client.connection.withDeadline(deadline, () => client.connection.workflowService.getSystemInfo({}));
    },

    /** The codec our client encodes payloads with (the same ring as every worker). */
    payloadCodec(): PayloadCodec {
      const codec = client.options.loadedDataConverter.payloadCodecs[0];
      if (!codec) throw new Error('the Temporal client has no payload codec');
      return codec;
    },
  };
}

export type Runs = ReturnType<typeof createRuns>;
