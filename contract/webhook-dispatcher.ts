// The webhook dispatcher workflow (workflows/webhook-dispatcher.ts): first attempts of every delivery.

/** One dispatcher workflow per webhook task queue, always running; the reconciler restarts it if it is gone. */
export const webhookDispatcherWorkflowId = (taskQueue: string) => `webhook-dispatcher-${taskQueue}`;
export type WebhookDispatcherInput = {
  /** Dispatcher activities running at once (each claims and sends deliveries concurrently). */
  dispatchers: number;
  /** How long one dispatcher activity runs before it returns and the workflow starts the next. */
  runForMs: number;
};
