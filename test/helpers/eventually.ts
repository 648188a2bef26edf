// The one poll loop of the test world: look until something holds, or fail saying what was awaited,
// for how long, and (when asked) where things stood at the end — so a slow run is explained by its
// own failure, not by a guess. No timed assertion: the deadline is a bound on waiting, never a speed goal.

export type EventuallyOptions = {
  /** How long to keep looking (default 30 s). */
  timeoutMs?: number;
  /** Pause between looks (default 50 ms). */
  everyMs?: number;
  /** Read on timeout and printed in the failure: the state that did not become what was awaited. */
  state?: () => unknown;
};

/** Calls `probe` until it returns a truthy value, and returns that value; throws after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: EventuallyOptions = {},
): Promise<T> {
  const { timeoutMs = 30_000, everyMs = 50, state } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() >= deadline) {
      const then = state ? `; then: ${JSON.stringify(await state())}` : '';
      throw new Error(`${what}: not within ${timeoutMs} ms${then}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
