// The provider task queue, shared by every workflow whose activities call the identity provider.

/**
 * Provider calls of sync imports and batches share one task queue and its fleet-wide rate limit;
 * a waiting caller goes first (Temporal task queue priority: lower runs sooner).
 */
export const PROVIDER_PRIORITY = { sync: 1, batch: 4 } as const;

/**
 * A provider call's place on the shared queue: a waiting caller before a batch (PROVIDER_PRIORITY),
 * and within each, the businesses with calls waiting served in turn — the business is the call's
 * fairness key (Temporal task queue fairness), so one business's large batch never holds another's
 * small one back. Runs started before the key existed have none (first come, first served).
 */
export function providerPriority(kind: keyof typeof PROVIDER_PRIORITY, businessId: string | undefined) {
  return { priorityKey: PROVIDER_PRIORITY[kind], ...(businessId ? { fairnessKey: businessId } : {}) };
}
