import type { Pool, QueryResultRow } from 'pg';
import type { DataSource } from 'typeorm';
import { poolOf } from './pool';

/**
 * Hot reads run straight on TypeORM's pg pool as named prepared statements: PostgreSQL plans
 * each once per connection, and no query is built or entity hydrated per request.
 */
export interface Statement {
  /** Names the text: one name, one statement. Empty: planned afresh for each execution's values. */
  name: string;
  text: string;
  values: unknown[];
}

export class PreparedStatements {
  constructor(private readonly dataSource: DataSource) {}

  private get pool(): Pool {
    return poolOf(this.dataSource);
  }

  async rows<T extends QueryResultRow>(statement: Statement): Promise<T[]> {
    const pool = this.pool;
    return (await pool.query<T>(statementFor(pool, statement))).rows;
  }
}

/**
 * Marks pools behind a transaction-mode pooler (DATABASE_POOL_MODE=transaction): consecutive
 * statements of one pg client may run on different server sessions, and pg remembers a name as
 * prepared on the client, so a named statement would fail on the next session. A property, not a
 * set of pools, so that views made over a pool with Object.create carry it too.
 */
const UNNAMED_ONLY = Symbol('unnamed statements only');

export function runUnnamedStatements(pool: Pool): void {
  Object.defineProperty(pool, UNNAMED_ONLY, { value: true });
}

/** The statement as `pool` may run it: unnamed, so parsed and planned each time, behind a pooler. */
export function statementFor(pool: Pool, statement: Statement): Statement {
  return UNNAMED_ONLY in pool ? { ...statement, name: '' } : statement;
}
