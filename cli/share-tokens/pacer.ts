// Spaces request starts evenly at `perSecond`, however many workers ask; each caller waits its slot.
export class Pacer {
  private next = 0;
  private readonly interval: number;

  constructor(perSecond: number) {
    this.interval = 1000 / perSecond;
  }

  async slot(): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.next);
    this.next = at + this.interval;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }
}

/** Exponential backoff with full jitter: base · 2^attempt, capped, times a random factor in [0.5, 1]. */
export function backoffMs(attempt: number, baseMs = 500, capMs = 30_000): number {
  return Math.min(capMs, baseMs * 2 ** attempt) * (0.5 + Math.random() / 2);
}
