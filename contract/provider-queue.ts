// The provider task queue, shared by every workflow whose activities call the identity provider.

/**
 * The kinds of provider call, each a lane of its own per business: `sync` for a caller waiting on
 * the answer (a sync import, a hosted-SDK token, a sandbox review), `batch` for a batch's rows.
 */
export const PROVIDER_LANES = ['sync', 'batch'] as const;
export type ProviderLane = (typeof PROVIDER_LANES)[number];

/**
 * Every provider call has the same priority (the level of the batches that ran before lanes existed,
 * so a batch scheduled then is not left behind), and what orders them is Temporal's task queue
 * fairness: each business's lanes are fairness keys (`sync:<businessId>`, `batch:<businessId>`),
 * served in turn with equal weights. A waiting caller is one turn from the provider however large a
 * batch runs beside it — its own business's or another's — and a batch is never starved: with n
 * lanes waiting it gets one call in n, where a strict priority for sync calls gave batches nothing
 * for as long as waiting callers kept the provider at its cap (a soak with every business at 3 sync
 * imports a second: batches took 9.4 minutes, p50, all of it after the traffic stopped).
 */
export const PROVIDER_PRIORITY_KEY = 4;

/** A provider call's place on the shared queue (see PROVIDER_PRIORITY_KEY). Runs started before the keys existed have none. */
export function providerPriority(lane: ProviderLane, businessId: string | undefined) {
  return { priorityKey: PROVIDER_PRIORITY_KEY, ...(businessId ? { fairnessKey: `${lane}:${businessId}` } : {}) };
}
