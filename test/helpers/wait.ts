import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The one polling helper: checks `condition` until it holds; throws, naming `what`, after
 * `withinMs`. For a state the test cannot be told about as it happens (a metric, a readiness
 * probe, another process); the limit is a ceiling for a broken run, never a measurement. Checks
 * come quickly at first, then further apart up to every `everyMs`: most states come within a few
 * milliseconds, and a fixed interval added half of it to each wait.
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, withinMs: number, what: string, everyMs = 50): Promise<void> {
  const deadline = Date.now() + withinMs;
  let pause = Math.min(FIRST_PAUSE_MS, everyMs);
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`expected ${what} within ${withinMs} ms`);
    await sleep(pause);
    pause = Math.min(pause * 2, everyMs);
  }
}

/** The first pause between checks, doubled after each until `everyMs`. */
const FIRST_PAUSE_MS = 2;
