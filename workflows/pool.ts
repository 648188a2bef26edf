// Runs `fn` over `items` with at most `size` in flight (deterministic: workflow code may use it).
export async function inPool<T>(items: readonly T[], size: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
