import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * The pg pool of an initialized data source. TypeORM's `PostgresDriver` keeps it in its public
 * `master` field (typed `any`) from `initialize()` until `destroy()`;
 * test/db/library-seams.cases.ts pins that it is pg's own `Pool`.
 */
export function poolOf(dataSource: DataSource): Pool {
  const { driver } = dataSource;
  if (!(driver instanceof PostgresDriver)) throw new Error('Expected a PostgreSQL data source');
  const pool: Pool | undefined = driver.master;
  if (!pool) throw new Error('The data source is not initialized');
  return pool;
}

/**
 * Gives every connection `pool` hands out an error listener for the whole checkout. pg-pool
 * listens to its idle connections only, and pg's Client emits 'error' whenever its connection
 * dies (after failing the statements it was running): a checked-out connection without a
 * listener ends the process. A server restart finds one: pg-pool hands out an idle connection on
 * a later tick, and its caller (TypeORM's query runner, which then adds a listener, or
 * Statements, which then sends a statement) resumes as a promise continuation, after the ticks
 * already queued, such as that connection's FATAL 57P01 or its socket's end. The pool emits
 * 'acquire' before it stops listening and 'release' after it listens again, so no moment is
 * left uncovered, whoever checks out. The listener needs to do nothing: a running statement has
 * failed already, and the pool discards a connection that has failed when it is released.
 */
export function guardCheckouts(pool: Pool): void {
  const ignore = () => undefined;
  pool.on('acquire', (client) => client.on('error', ignore));
  pool.on('release', (_error, client) => client.off('error', ignore));
}
