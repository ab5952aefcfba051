/** What a promise that did not settle in time rejects with. */
export class TimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimeoutError';
  }
}

/**
 * `promise`, or a TimeoutError after `ms`. The work itself goes on (a promise cannot be
 * cancelled); the caller only stops waiting for it. The timer never outlives the race. One
 * promise of its own, where a race of two and a `finally` made three: the limiter's Redis
 * calls go through here once a request.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, message = `expected an answer within ${ms} ms, got none`): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError(message)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
