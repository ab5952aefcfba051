import type { PoolClient, QueryResultRow } from 'pg';

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

/** Sends `statement` on a checked-out connection: every prepared statement is sent here. */
export async function runStatement<T extends QueryResultRow>(client: PoolClient, statement: Statement): Promise<T[]> {
  return (await client.query<T>(statement)).rows;
}
