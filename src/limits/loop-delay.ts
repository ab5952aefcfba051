/** How often the loop is sampled. */
const SAMPLE_EVERY_MS = 10;

/** What remains of a delay after each sample: a spike fades to a tenth in about 100 ms. */
const DECAY = 0.8;

/**
 * How late the instance's event loop runs a timer, lately: what every request on the instance
 * waits for before each of its steps, whoever sent it. A sample every 10 ms; the figure jumps to
 * a late sample at once and fades by a fifth each sample after, so that one busy moment weighs
 * for about 100 ms. A timer of its own, unref'd: it never keeps the process up.
 */
export class LoopDelay {
  private delayMs = 0;
  private timer?: NodeJS.Timeout;

  /** Milliseconds a timer is late, lately. */
  get ms(): number {
    return this.delayMs;
  }

  start(): this {
    let expected = performance.now() + SAMPLE_EVERY_MS;
    const sample = () => {
      const now = performance.now();
      this.delayMs = Math.max(now - expected, this.delayMs * DECAY);
      expected = now + SAMPLE_EVERY_MS;
      this.timer = setTimeout(sample, SAMPLE_EVERY_MS).unref();
    };
    this.timer = setTimeout(sample, SAMPLE_EVERY_MS).unref();
    return this;
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
