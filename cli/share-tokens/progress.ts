// A one-line progress bar on a terminal (stderr); silent when stderr is not a terminal.
export class Progress {
  private lastDraw = 0;
  private readonly started = performance.now();
  done = 0;
  failed = 0;
  retries = 0;

  private readonly total: number;
  private readonly enabled: boolean;

  constructor(total: number, enabled: boolean) {
    this.total = total;
    this.enabled = enabled;
  }

  rate(): number {
    const s = (performance.now() - this.started) / 1000;
    return s > 0 ? this.done / s : 0;
  }

  elapsedSeconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  tick(force = false): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const finished = this.done + this.failed;
    const width = 30;
    const filled = this.total ? Math.round((finished / this.total) * width) : width;
    const rate = this.rate();
    const eta = rate > 0 ? Math.round((this.total - finished) / rate) : 0;
    const line =
      `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${finished}/${this.total}  ` +
      `${rate.toFixed(1)}/s  ${this.failed} failed  ${this.retries} retries  eta ` +
      `${Math.floor(eta / 60)}m${String(eta % 60).padStart(2, '0')}s`;
    process.stderr.write(`\r${line}\x1b[K`);
  }

  end(): void {
    if (this.enabled) {
      this.tick(true);
      process.stderr.write('\n');
    }
  }
}
