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

type ConnectCallback = (error: Error | undefined, client?: PoolClient, release?: PoolClient['release']) => void;

/**
 * The data source as one request sees it: every checkout of a pool connection (TypeORM's
 * queries and transactions, the prepared statements) first takes from `budget`. Passed down
 * explicitly, through the request's services, rather than found in async context: on Node 20
 * an AsyncLocalStorage hooks every promise of the process, and costs every request far more
 * than the budget does.
 */
export function budgetedView(dataSource: DataSource, budget: StatementBudget): DataSource {
  const pool = poolOf(dataSource);
  const checkout = async (): Promise<PoolClient> => {
    const free = await budget.acquire();
    try {
      const client = await pool.connect();
      const release = client.release.bind(client);
      client.release = (error?: Error | boolean) => {
        client.release = release;
        free();
        return release(error);
      };
      return client;
    } catch (error) {
      free();
      throw error;
    }
  };
  // pg's Pool.query and TypeORM's driver both check out through `connect`, with a callback or without.
  const connect = (callback?: ConnectCallback) => {
    const client = checkout();
    if (!callback) return client;
    client.then(
      (checkedOut) => callback(undefined, checkedOut, checkedOut.release),
      (error: Error) => callback(error),
    );
    return undefined;
  };
  const master: Pool = Object.create(pool, { connect: { value: connect } });
  const driver = Object.create(dataSource.driver, { master: { value: master } });
  const view: DataSource = Object.create(dataSource, { driver: { value: driver } });
  // The view's repositories and transactions must reach its driver, not the data source's. Made
  // on first use: the hot reads go straight to the pool.
  let manager: DataSource['manager'] | undefined;
  Object.defineProperty(view, 'manager', { get: () => (manager ??= view.createEntityManager()) });
  return view;
}
