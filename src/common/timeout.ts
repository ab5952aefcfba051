/** What a promise that did not settle in time rejects with. */
export class TimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimeoutError';
  }
}

/**
 * `promise`, or a TimeoutError after `ms`. The work itself goes on (a promise cannot be
 * cancelled); the caller only stops waiting for it. The timer never outlives the race.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, message = `expected an answer within ${ms} ms, got none`): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
