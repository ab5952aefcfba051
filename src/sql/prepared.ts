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
    return (await this.pool.query<T>(statement)).rows;
  }
}
