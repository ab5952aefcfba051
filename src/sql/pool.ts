import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The pg pool of an initialized data source: TypeORM's Postgres driver keeps it, untyped, as
 * `master`, from `initialize()` until `destroy()`.
 */
export function poolOf(dataSource: DataSource): Pool {
  const pool = (dataSource.driver as unknown as { master?: Pool }).master;
  if (!pool) throw new Error('The data source is not initialized');
  return pool;
}
