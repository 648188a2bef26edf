// What the API, the reconciler and the admin CLI ask of runs that already exist: cancel one, see
// whether one is running, list and describe them (vouch trace), and whether Temporal answers at all; and the
// codec the client encrypts payloads with (for the codec endpoint). Starting and messaging runs is
// temporal/starters.ts.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { batchWorkflowId } from '../contract/batch-import.ts';
import { requirementBatchWorkflowId } from '../contract/requirement-batch.ts';
import { webhookRetryWorkflowId } from '../contract/webhook-retry.ts';
import { isEncrypted } from './payload-codec.ts';

/** A run as an operator sees it: which run, of what, in what state since when. */
export type RunDescription = { workflowId: string; runId: string; type: string; status: string; startedAt: string; closedAt: string | null };

/** The Temporal Web UI's page of a run's history (of a workflow's latest run, without a run id: its list filtered to the id). */
export function runLink(uiBase: string, namespace: string, workflowId: string, runId?: string | null): string {
  const ns = `${uiBase.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}`;
  return runId
    ? `${ns}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`
    : `${ns}/workflows?query=${encodeURIComponent(`WorkflowId="${workflowId}"`)}`;
}

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
  const isRunning = async (workflowId: string): Promise<boolean> => {
    try {
      return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  };
  return {
    /** Stops a batch's run (the batch is canceled in PostgreSQL first; this only saves its empty steps). */
    cancelBatchRun: (batchId: string, run: number) => cancel(batchWorkflowId(batchId, run)),

    /** Stops a requirement batch's run (canceled in PostgreSQL first, as a batch import). */
    cancelRequirementBatchRun: (batchId: string, run: number) => cancel(requirementBatchWorkflowId(batchId, run)),

    /** Stops a delivery's retry workflow (the delivery is canceled in PostgreSQL first). */
    cancelDeliveryRetry: (deliveryId: string, run: number) => cancel(webhookRetryWorkflowId(deliveryId, run)),

    /** Whether the batch's run is running now (false when it closed or never started). */
    isBatchRunRunning: (batchId: string, run: number) => isRunning(batchWorkflowId(batchId, run)),

    /** Whether the requirement batch's run is running now. */
    isRequirementBatchRunRunning: (batchId: string, run: number) => isRunning(requirementBatchWorkflowId(batchId, run)),

    /**
     * Every run of a workflow id that visibility lists (a continue-as-new chain, a reused id), oldest
     * first, at most `limit`; visibility may lag the newest run by a moment.
     */
    async runsOf(workflowId: string, limit = 100): Promise<RunDescription[]> {
      const out: RunDescription[] = [];
      for await (const r of client.workflow.list({ query: `WorkflowId = ${JSON.stringify(workflowId)}` })) {
        out.push({
          workflowId,
          runId: r.runId,
          type: r.type,
          status: r.status.name,
          startedAt: r.startTime.toISOString(),
          closedAt: r.closeTime ? r.closeTime.toISOString() : null,
        });
        if (out.length >= limit) break;
      }
      return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
    },

    /** A run (the workflow's latest, without a run id) as the server describes it; null when it knows none. */
    async describe(workflowId: string, runId?: string): Promise<RunDescription | null> {
      try {
        const d = await client.workflow.getHandle(workflowId, runId).describe();
        return {
          workflowId,
          runId: d.runId,
          type: d.type,
          status: d.status.name,
          startedAt: d.startTime.toISOString(),
          closedAt: d.closeTime ? d.closeTime.toISOString() : null,
        };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return null;
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

    /**
     * The codec our client encodes payloads with (the same ring as every worker), for the codec
     * endpoint: its decoding only reads (the Web UI, the CLI), so a payload that is not encrypted (a
     * history from before encryption, one written past Vouch) is shown as it is stored, not refused.
     */
    payloadCodec(): PayloadCodec {
      const codec = client.options.loadedDataConverter.payloadCodecs[0];
      if (!codec) throw new Error('the Temporal client has no payload codec');
      return {
        encode: (payloads) => codec.encode(payloads),
        decode: (payloads) => Promise.all(payloads.map(async (p) => (isEncrypted(p) ? (await codec.decode([p]))[0]! : p))),
      };
    },
  };
}

export type Runs = ReturnType<typeof createRuns>;
