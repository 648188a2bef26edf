// The worker pool: runs `fn` over `items` with at most `size` in flight, in order of start. Knows
// nothing of Vouch and touches no I/O itself, so workflow code may use it (it is deterministic).

/** Runs `fn` over `items`, `size` at a time; stops starting new items once `until()` is true. */
export async function inPool<T>(items: readonly T[], size: number, fn: (item: T) => Promise<unknown>, options: { until?: () => boolean } = {}): Promise<void> {
  const until = options.until ?? (() => false);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (!until() && next < items.length) await fn(items[next++]!);
    }),
  );
}
