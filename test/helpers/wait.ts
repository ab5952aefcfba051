import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The one polling helper: checks `condition` every `everyMs` until it holds; throws, naming
 * `what`, after `withinMs`. For a state the test cannot be told about as it happens (a metric, a
 * readiness probe, another process); the limit is a ceiling for a broken run, never a measurement.
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, withinMs: number, what: string, everyMs = 50): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`expected ${what} within ${withinMs} ms`);
    await sleep(everyMs);
  }
}
