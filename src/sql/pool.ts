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
