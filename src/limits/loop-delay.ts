/** How often the loop is sampled. */
const SAMPLE_EVERY_MS = 10;

/** What remains of a delay after each sample: a spike fades to a tenth in about 100 ms. */
const DECAY = 0.8;

/**
 * How late the instance's event loop runs a timer, lately: what every request on the instance
 * waits for before each of its steps, whoever sent it. A sample every 10 ms; the figure jumps to
 * a late sample at once and fades by a fifth each sample after, so that one busy moment weighs
 * for about 100 ms. While the next sample is overdue, the figure is at least how overdue it is:
 * a wave of requests read in one long turn of the loop is late before any timer can say so.
 * A timer of its own, unref'd: it never keeps the process up.
 */
export class LoopDelay {
  private delayMs = 0;
  /** When the next sample is due; Infinity until started. */
  private expected = Infinity;
  private timer?: NodeJS.Timeout;

  /** Milliseconds a timer is late, lately, or the next sample's lateness so far if that is more. */
  get ms(): number {
    return Math.max(this.delayMs, performance.now() - this.expected);
  }

  start(): this {
    this.expected = performance.now() + SAMPLE_EVERY_MS;
    const sample = () => {
      const now = performance.now();
      this.delayMs = Math.max(now - this.expected, this.delayMs * DECAY);
      this.expected = now + SAMPLE_EVERY_MS;
      this.timer = setTimeout(sample, SAMPLE_EVERY_MS).unref();
    };
    this.timer = setTimeout(sample, SAMPLE_EVERY_MS).unref();
    return this;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.expected = Infinity;
  }
}
