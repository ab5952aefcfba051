import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `condition` every 100 ms until it holds; throws, naming `what`, after `withinMs`. */
export async function waitFor(condition: () => Promise<boolean>, withinMs: number, what: string): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`expected ${what} within ${withinMs} ms`);
    await sleep(100);
  }
}
