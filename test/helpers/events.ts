// Events and retry workflows for webhook tests: an account_status_change event recorded as the
// onboarding records one (with its deliveries), and the retry workflow of a delivery once the
// dispatcher has handed it over.
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { recordEvent } from '../../store/events.ts';
import type { Writer } from '../../store/in-tx.ts';
import { webhookRetryWorkflowId } from '../../contract/webhook-retry.ts';

export function recordTestEvent(q: Writer, businessId: string, label: string, data: Record<string, unknown> = {}): Promise<string> {
  return recordEvent(q, {
    businessId,
    entityId: null,
    eventName: 'card_issuance_api_access_updated',
    eventType: 'account_status_change',
    payload: (id) => ({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: id, ...data } }),
    sourceKey: `${label}-${randomUUID()}`,
  });
}

/** The retry workflow of a delivery (run 1), once it exists (the hand-off follows the failed attempt's record). */
export async function retryWorkflowOf(temporal: Client, deliveryId: string): Promise<WorkflowHandle> {
  const handle = temporal.workflow.getHandle(webhookRetryWorkflowId(deliveryId, 1));
  for (let i = 0; ; i++) {
    try {
      await handle.describe();
      return handle;
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
