// How far apart calls to the identity provider go (spec 4.1, 8: 10 requests per second). The
// Temporal server's task-queue limit lets a burst through (a full bucket, then its refill: 20 calls
// in the first second of a batch, measured), so every call also takes a slot this far after the
// previous one (store/provider-pace.ts): then no window of one second holds more than the limit. The
// 5 % margin (50 ms over ten calls) absorbs the jitter between a call's slot and its arrival — a
// busy event loop, the network; with 2 % a loaded test run saw 11 arrivals in one second once in 13.
export const PACE_MARGIN = 1.05;

export function providerSpacingMs(ratePerSecond: number): number {
  return (1000 / ratePerSecond) * PACE_MARGIN;
}

/** The Temporal server's dispatch rate to match: never faster than the slots are given out. */
export function providerDispatchPerSecond(ratePerSecond: number): number {
  return 1000 / providerSpacingMs(ratePerSecond);
}

/**
 * Provider calls a worker process runs at once. A call waits for its slot while it holds an
 * execution place, so the fewer places, the fewer calls dispatched ahead of their slots — and the
 * closer the order at the provider stays to the Temporal server's fair order between businesses
 * (and a sync import's priority). Enough for a provider answering within half a second at the full rate.
 */
export function providerConcurrency(ratePerSecond: number): number {
  return Math.max(4, Math.ceil(ratePerSecond / 2));
}

/**
 * How late a call may go after its slot and still keep every second within the rate: `rate` slots
 * span rate × spacing = 1000 × margin ms, so a call late by up to 1000 × (margin − 1) ms (50 ms),
 * whatever the rate, cannot make one call too many in a second.
 */
export const LATENESS_ALLOWED_MS = 1000 * (PACE_MARGIN - 1);

/** The failure type of an attempt that could not wait for its slot (retried like any provider hiccup). */
export const PROVIDER_SLOT_FAILURE = 'ProviderSlotTooFar';
