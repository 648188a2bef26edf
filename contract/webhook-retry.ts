// The retry workflow of a webhook delivery (workflows/webhook-retry.ts), retired: retries wait in
// PostgreSQL now (store/deliveries.ts); runs an earlier release started end at their next step.

/**
 * The retry workflow of a delivery whose attempt failed, per run of the delivery (a redelivery is a
 * new run). Deliveries that succeed at once never have one.
 */
export const webhookRetryWorkflowId = (deliveryId: string, run: number) => `webhook-retry-${deliveryId}-run-${run}`;
/** The run a retry workflow's id names (undefined for an id of another shape). */
export function runOfRetryWorkflowId(workflowId: string): number | undefined {
  const m = /^webhook-retry-[0-9a-f-]{36}-run-(\d+)$/.exec(workflowId);
  return m ? Number(m[1]) : undefined;
}
export type WebhookRetryInput = { deliveryId: string };
