import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool, PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { ApiError } from '../errors';
import { poolOf } from '../sql/pool';
import { STATEMENT_TIMEOUT_MS } from './data-source';

/**
 * What one request may ask of the database (docs/contract.md §5): statements in all, and at
 * once. No query within the cost limit comes near the total (an unbatched statement costs at
 * least 10). Statements at once are bounded per identity, over all its requests in flight: one
 * client's scans cannot take every connection, nor every core of the database.
 */
export const STATEMENTS_PER_REQUEST = 200;

/** A counting semaphore: `size` holders at once, the rest wait in order. */
export class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly size: number,
    private readonly onIdle: () => void = () => undefined,
  ) {}

  /**
   * Waits for a slot, at most `timeoutMs` (then rejects as the pool does when it has no
   * connection in time); the returned function frees the slot (once).
   */
  async take(timeoutMs = Infinity): Promise<() => void> {
    if (this.running < this.size) this.running += 1;
    else {
      await new Promise<void>((resolve, reject) => {
        const waiter = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = Number.isFinite(timeoutMs)
          ? setTimeout(() => {
              const at = this.waiting.indexOf(waiter);
              if (at >= 0) this.waiting.splice(at, 1);
              reject(new Error("timeout exceeded when trying to connect: waiting for this client's turn on the database"));
            }, timeoutMs)
          : undefined;
        this.waiting.push(waiter);
      });
    }
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      // The slot passes straight to the next waiter, if any.
      const next = this.waiting.shift();
      if (next) return next();
      this.running -= 1;
      if (this.running === 0) this.onIdle();
    };
  }
}

/** The statement slots of each identity with statements running or waiting; no others are kept. */
export class IdentitySlots {
  private readonly slots = new Map<string, Slots>();

  of(identity: string, size: number): Slots {
    let slots = this.slots.get(identity);
    if (!slots) {
      slots = new Slots(size, () => this.slots.delete(identity));
      this.slots.set(identity, slots);
    }
    return slots;
  }
}

/**
 * One request's allowance. A statement here is a checkout of a pool connection: one statement
 * for every read, one for a whole transaction.
 */
export class StatementBudget {
  private used = 0;

  constructor(
    /** Looked up at each statement: an identity's slots are dropped while none is taken. */
    private readonly slots: () => Slots,
    readonly total = STATEMENTS_PER_REQUEST,
  ) {}

  /** Takes one statement, waiting for a slot; the returned function frees the slot. */
  acquire(): Promise<() => void> {
    if (this.used >= this.total) {
      return Promise.reject(
        new ApiError('QUERY_TOO_COMPLEX', `This request has run the ${this.total} database statements a request may run; ask for less at once`),
      );
    }
    this.used += 1;
    // A turn is waited for at most as long as a statement may run: on a hung database each of a
    // client's requests gets its 503 within that bound, not one after another.
    return this.slots().take(STATEMENT_TIMEOUT_MS);
  }
}

const budgets = new AsyncLocalStorage<StatementBudget>();

/** Runs `action` (and everything it starts) under `budget`. */
export function withStatementBudget<T>(budget: StatementBudget, action: () => T): T {
  return budgets.run(budget, action);
}

type ConnectCallback = (error: Error | undefined, client?: PoolClient, release?: PoolClient['release']) => void;
const budgeted = new WeakSet<Pool>();

/**
 * Makes every checkout of the DataSource's pool (TypeORM's and the prepared statements') take
 * from the budget of the request it runs for. Checkouts outside any request pass as before.
 */
export function budgetStatements(dataSource: DataSource): void {
  const pool = poolOf(dataSource);
  if (budgeted.has(pool)) return;
  budgeted.add(pool);
  // Without a callback, pg's connect() returns a promise.
  const original = pool.connect.bind(pool) as (callback?: ConnectCallback) => unknown;
  const connect = original as (callback: ConnectCallback) => void;
  const checkout = async (budget: StatementBudget): Promise<PoolClient> => {
    const free = await budget.acquire();
    return new Promise((resolve, reject) =>
      connect((error, client, release) => {
        if (error || !client || !release) {
          free();
          reject(error ?? new Error('expected a pool client, got none'));
          return;
        }
        client.release = (releaseError?: Error | boolean) => {
          free();
          return release(releaseError);
        };
        resolve(client);
      }),
    );
  };
  (pool as { connect: unknown }).connect = (callback?: ConnectCallback) => {
    const budget = budgets.getStore();
    if (!budget) return original(callback);
    const client = checkout(budget);
    if (!callback) return client;
    client.then(
      (checkedOut) => callback(undefined, checkedOut, checkedOut.release),
      (error: Error) => callback(error),
    );
    return undefined;
  };
}
