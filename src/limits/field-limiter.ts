import { getGraphQLRateLimiter } from 'graphql-rate-limit';
import type { GraphQLResolveInfo } from 'graphql';
import { FieldLimitStore } from './field-limit.store';

export interface FieldLimit {
  /** Calls admitted per window; at least 1. */
  max: number;
  windowMs: number;
  /** The refusal message; by default one naming the field and the limit. */
  message?: string;
}

export interface FieldLimiter {
  /** Counts one call of `fieldName` by `identity`: undefined when admitted, else the refusal message. */
  limit(identity: string, fieldName: string, limit: FieldLimit): Promise<string | undefined>;
}

/**
 * Per-field limits (docs/contract.md §5: placeOrder, createApiKey) through graphql-rate-limit,
 * whose limiter reads the caller's timestamps, then writes them back: concurrent calls would all
 * read the same list and all be admitted. Calls for one (identity, field) are therefore chained
 * one after the other in this process, and each holds the store's Redis lock while it runs, so
 * that instances sharing Redis take turns too: the limit is exact within and across instances.
 *
 * Refused calls are not counted (`uncountRejected`), as for the request limits, which also
 * keeps each stored list at most `max` long.
 */
export function createFieldLimiter(store: FieldLimitStore = new FieldLimitStore()): FieldLimiter {
  const rateLimiter = getGraphQLRateLimiter({
    store,
    identifyContext: (context: { identity: string }) => context.identity,
    formatError: ({ fieldName, max, window }) =>
      `Too many ${fieldName} calls: at most ${max} per ${describeWindow(window)}; retry later`,
  });
  const serialise = keyedMutex();

  return {
    async limit(identity, fieldName, { max, windowMs, message }) {
      if (!Number.isInteger(max) || max < 1) throw new Error(`expected a field limit of at least 1, got ${max}`);
      return serialise(`${identity}\n${fieldName}`, () =>
        store.exclusive(identity, fieldName, () =>
          rateLimiter(
            // The library reads only the field name from `info`, and `args` for identityArgs.
            { parent: undefined, args: {}, context: { identity }, info: { fieldName } as GraphQLResolveInfo },
            { max, window: `${windowMs}`, message, uncountRejected: true },
          ),
        ),
      );
    },
  };
}

/** Runs tasks with the same key one at a time, in call order; idle keys are forgotten. */
function keyedMutex() {
  const tails = new Map<string, Promise<void>>();
  return <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}

function describeWindow(windowMs: number): string {
  if (windowMs === 60_000) return 'minute';
  if (windowMs % 60_000 === 0) return `${windowMs / 60_000} minutes`;
  return `${windowMs / 1000} seconds`;
}
