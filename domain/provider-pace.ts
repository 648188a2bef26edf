// How provider calls are paced (spec 4.1, 8: 10 requests per second), fleet-wide, in two parts:
// - slots: every call takes a slot this far after the previous one (store/provider-pace.ts) and waits
//   for it, so calls go evenly spaced and in the order the Temporal server dispatched them (its
//   task-queue limit lets a burst through: 20 calls in the first second of a batch, measured);
// - the window: just before its request goes, a call claims a place among the sends of the last
//   window, and the cap's calls at most hold one (migration 025). A call counts from its claim until a
//   window after its request left, so however late a process wakes from its slot — a saturated
//   machine — no window holds more than the cap's sends. Slots alone could not promise that: a soak
//   with every business at 3 sync imports a second saw 11 calls arrive within 985 ms.
// The slots' 5 % margin absorbs the jitter between a call's slot and its arrival (with 2 % a loaded
// test run once saw 11 arrivals in one second, before the window); the window's own is below.
export const PACE_MARGIN = 1.05;

/**
 * The window's own margin, smaller than the slots': ten slots span 1,050 ms, so a call stamped up to
 * 20 ms after its slot finds its place free and the window stays the backstop it is meant to be
 * (with the same margin every call found it full by those milliseconds, waited, and the order the
 * slots keep — a fair one between businesses — came apart). 30 ms absorb the jitter between a
 * request leaving and its arrival, now that a send is counted from when it really left.
 */
export const WINDOW_MARGIN = 1.03;

export function providerSpacingMs(ratePerSecond: number): number {
  return (1000 / ratePerSecond) * PACE_MARGIN;
}

/** The Temporal server's dispatch rate to match: never faster than the slots are given out. */
export function providerDispatchPerSecond(ratePerSecond: number): number {
  return 1000 / providerSpacingMs(ratePerSecond);
}

/**
 * The window of sends: at most `cap` requests leave within any `windowMs` (a whole number of calls
 * within a second and its margin, so a fractional rate rounds down). A claim still to be stamped
 * counts until `pendingMs` (the request's own timeout, PROVIDER_TIMEOUT_MS: it cannot leave later) plus a window after it;
 * a call that finds the window held by requests still leaving looks again after `pollMs`.
 */
export function providerWindow(ratePerSecond: number, requestTimeoutMs: number) {
  return { cap: Math.max(1, Math.floor(ratePerSecond)), windowMs: 1000 * WINDOW_MARGIN, pendingMs: requestTimeoutMs, pollMs: 20 };
}

/** Everything a provider call's pace needs (activities/provider-pace.ts). */
export type ProviderPace = { spacingMs: number; window: ReturnType<typeof providerWindow> };

export function providerPace(ratePerSecond: number, requestTimeoutMs: number): ProviderPace {
  return { spacingMs: providerSpacingMs(ratePerSecond), window: providerWindow(ratePerSecond, requestTimeoutMs) };
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

/** The failure type of an attempt that could not wait for its slot (retried like any provider hiccup). */
export const PROVIDER_SLOT_FAILURE = 'ProviderSlotTooFar';
