// Spaces request starts at most `perSecond`, however many workers ask. Each start is at least one
// interval after the previous *actual* start (a late timer never lets the next start catch up), and
// the interval carries a 1 % margin, so any window of the provider's holds at most rate × window
// requests even with timer and network jitter: a client set to the provider's limit sees no 429.
export const PACING_MARGIN = 1.01;

export class Pacer {
  private chain: Promise<void> = Promise.resolve();
  private last = Number.NEGATIVE_INFINITY;
  private readonly interval: number;

  constructor(perSecond: number) {
    this.interval = (1000 / perSecond) * PACING_MARGIN;
  }

  slot(): Promise<void> {
    const turn = this.chain.then(async () => {
      // Timers have millisecond granularity and may fire a little early: wait until really due.
      for (let wait = this.last + this.interval - performance.now(); wait > 0; wait = this.last + this.interval - performance.now()) {
        await new Promise((r) => setTimeout(r, Math.ceil(wait)));
      }
      this.last = performance.now();
    });
    this.chain = turn;
    return turn;
  }
}

/** Exponential backoff with full jitter: base · 2^attempt, capped, times a random factor in [0.5, 1]. */
export function backoffMs(attempt: number, baseMs = 500, capMs = 30_000): number {
  return Math.min(capMs, baseMs * 2 ** attempt) * (0.5 + Math.random() / 2);
}
