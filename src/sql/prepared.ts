import type { Pool, PoolClient, QueryResultRow } from 'pg';

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

/**
 * Marks pools behind a transaction-mode pooler (DATABASE_POOL_MODE=transaction): consecutive
 * statements of one pg client may run on different server sessions, and pg remembers a name as
 * prepared on the client, so a named statement would fail on the next session.
 */
const unnamedOnly = new WeakSet<Pool>();

export function runUnnamedStatements(pool: Pool): void {
  unnamedOnly.add(pool);
}

/** The statement as `pool` may run it: unnamed, so parsed and planned each time, behind a pooler. */
export function statementFor(pool: Pool, statement: Statement): Statement {
  return unnamedOnly.has(pool) ? { ...statement, name: '' } : statement;
}
