import type { Client, PoolClient, QueryResultRow } from 'pg';
import type { AbortWatch } from '../common/scope';
import { inTrace, type Trace } from '../common/trace';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';
import { cancelRunning } from './cancel';
import { poolOf } from './pool';
import { runStatement, type Statement, statementFor } from './prepared';
import type { ReadRoute } from './read-route';

/** What each statement takes from: one request's budget (db/statement-budget.ts). */
export interface Budget {
  /** Takes one statement, waiting for its turn; the returned function gives the turn back. */
  acquire(): Promise<() => void>;
  /** Charges `ms` a statement held its connection. */
  charge(ms: number): void;
  /** Aborted when the request's client has gone: its statement is cancelled, the next not started. */
  readonly client?: AbortWatch;
  /** The request's trace, when it is traced: each statement's span is its child. */
  readonly trace?: Trace;
}

/**
 * How the services reach the database. Each call is one statement: one checkout of a pool
 * connection, through pg's `Pool.connect` or a TypeORM query runner's `connect`, both documented.
 * With a budget, each takes from it first and is charged the time it holds the connection. One
 * per request, made by `within`: the budget is passed down explicitly, not found in async
 * context, which on Node 20 hooks every promise of the process.
 */
export class Statements {
  constructor(
    private readonly dataSource: DataSource,
    private readonly budget?: Budget,
    private readonly route?: ReadRoute,
  ) {}

  /** The same database, each statement taken from `budget`; reads go where `route` says once it says. */
  within(budget: Budget, route?: ReadRoute): Statements {
    return new Statements(this.dataSource, budget, route);
  }

  /** The same budget, reads where `route` says. */
  routedBy(route: ReadRoute): Statements {
    return new Statements(this.dataSource, this.budget, route);
  }

  /** The same budget, every statement on the primary whatever the request's route. */
  onPrimary(): Statements {
    return this.route ? new Statements(this.dataSource, this.budget) : this;
  }

  /** A prepared statement's rows, on a pool connection of its own. */
  rows<T extends QueryResultRow>(statement: Statement): Promise<T[]> {
    return this.routed((dataSource) => this.rowsOn(dataSource, statement));
  }

  /** TypeORM reads and writes on one connection, whatever number of SQL statements `work` sends. */
  manager<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.routed((dataSource) => this.managerOn(dataSource, work));
  }

  /**
   * `run` on the request's replica when it has one, else on the primary; a read the replica could
   * not serve (unreachable, or cancelled by its replay) runs again on the primary, the client none
   * the wiser.
   */
  private async routed<T>(run: (dataSource: DataSource) => Promise<T>): Promise<T> {
    const replica = this.route?.replica;
    if (replica === undefined) return run(this.dataSource);
    try {
      return await run(replica.dataSource);
    } catch (error) {
      if (this.budget?.client?.aborted || !this.route?.retryOnPrimary(replica, error)) throw error;
      return run(this.dataSource);
    }
  }

  private rowsOn<T extends QueryResultRow>(dataSource: DataSource, statement: Statement): Promise<T[]> {
    const pool = poolOf(dataSource);
    return this.checkout<PoolClient, T[]>(
      () => pool.connect(),
      // As pg's own Pool.query does: a connection whose statement failed is not reused.
      (client, error) => client.release(error),
      (client) => runStatement<T>(client, statementFor(pool, statement)),
    );
  }

  private managerOn<T>(dataSource: DataSource, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const runner = dataSource.createQueryRunner();
    return this.checkout<Client, T>(
      // Connected before `work`, so that the wait for a connection is not charged; `connect()`
      // resolves to the pg client the runner holds, the one to cancel.
      () => runner.connect() as Promise<Client>,
      // A connection a cancel was sent on is closed, so that the pool drops it (below).
      async (client, error) => {
        if (error instanceof StatementCancelled) await client.end().catch(() => undefined);
        await runner.release();
      },
      () => work(runner.manager),
    );
  }

  repository<E extends ObjectLiteral, T>(entity: EntityTarget<E>, work: (repository: Repository<E>) => Promise<T>): Promise<T> {
    return this.manager((manager) => work(manager.getRepository(entity)));
  }

  /** A transaction: one statement, however many it sends. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.manager((manager) => manager.transaction(work));
  }

  /** A plain SQL statement through TypeORM: its rows, and its errors as QueryFailedError. */
  query<T>(text: string, values?: unknown[]): Promise<T> {
    return this.manager((manager) => manager.query(text, values));
  }

  /**
   * One statement: a slot of the budget, a connection, the work, then both given back. When the
   * request's client goes, a wait for either ends at once and a running statement is cancelled;
   * the time it held its connection is charged all the same.
   */
  private async checkout<C extends Client, T>(
    connect: () => Promise<C>,
    release: (connection: C, error?: Error) => unknown,
    work: (connection: C) => Promise<T>,
  ): Promise<T> {
    const client = this.budget?.client;
    let free: (() => void) | undefined;
    try {
      free = await this.budget?.acquire();
      const connection = await connectUnlessAborted(connect, release, client);
      // The statement's time is what it holds a connection, not what it waited for one.
      const connectedAt = performance.now();
      let cancelled = false;
      const cancel = () => {
        cancelled = true;
        cancelRunning(connection);
      };
      const stopListening = client?.onAbort(cancel);
      let failure: Error | undefined;
      try {
        // Inside the request's trace: the statements `work` sends are its spans' children.
        return await inTrace(this.budget?.trace, () => work(connection));
      } catch (error) {
        if (error instanceof Error) failure = error;
        throw error;
      } finally {
        stopListening?.();
        this.budget?.charge(performance.now() - connectedAt);
        // A cancel may land after the statement has ended: the connection is never reused, lest it cancel another's.
        await release(connection, cancelled ? new StatementCancelled() : failure);
      }
    } catch (error) {
      throw client?.aborted && error === client.reason ? new StatementCancelled() : error;
    } finally {
      free?.();
    }
  }
}

/**
 * A statement not run, or cut short, because its request's client went away: reported as
 * PostgreSQL reports a cancelled statement (SQLSTATE 57014), so that both are handled alike.
 */
export class StatementCancelled extends Error {
  readonly code = '57014';

  constructor() {
    super('canceling statement: the client went away');
    this.name = 'StatementCancelled';
  }
}

/**
 * A pool connection, or the abort's reason once the client has gone: a wait for a connection
 * (every one busy) cannot be taken out of pg's queue, so the connection it gets later goes
 * straight back.
 */
function connectUnlessAborted<C>(connect: () => Promise<C>, release: (connection: C) => unknown, client?: AbortWatch): Promise<C> {
  if (!client) return connect();
  if (client.aborted) return Promise.reject(client.reason);
  const connecting = connect();
  return new Promise<C>((resolve, reject) => {
    const stopListening = client.onAbort(() => {
      reject(client.reason);
      connecting.then(release, () => undefined);
    });
    connecting.then(
      (connection) => {
        stopListening();
        resolve(connection);
      },
      (error: unknown) => {
        stopListening();
        reject(error);
      },
    );
  });
}
