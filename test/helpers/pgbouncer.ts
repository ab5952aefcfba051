import { type Database, openDatabase } from '../../src/db/database';
import { IN_MEMORY } from '../../src/db/in-memory';
import type { TestDatabase } from './database';
import { type PgBouncer, pgbouncerBinary } from './pgbouncer-server';
import { describeWhen } from './services';

export { type PgBouncer, startPgBouncer } from './pgbouncer-server';

/**
 * Suites behind a real PgBouncer: services mode (DATABASE_URL) with the binary installed
 * (.ci/run installs it). Elsewhere they show as skipped, never vanish.
 */
export const withPgBouncer = describeWhen(
  (!process.env.DATABASE_URL && 'DATABASE_URL (services mode) and pgbouncer') || (!pgbouncerBinary() && 'pgbouncer (apt-get install pgbouncer)'),
);

/** The name of the database a postgres:// URL points at. */
export const databaseOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

/** The settings of an instance behind `bouncer`, LISTENing and migrating on `db` directly. */
export function pooledEnv(bouncer: PgBouncer, db: Pick<TestDatabase, 'url'>): Record<string, string> {
  return { DATABASE_URL: bouncer.url(databaseOf(db.url)), DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: db.url };
}

/** `db` opened as a gateway opens it behind `bouncer`: pooled in transaction mode, migrated directly. */
export async function openPooled(bouncer: PgBouncer, db: Pick<TestDatabase, 'url'>, settings: { statementTimeoutMs?: number } = {}): Promise<TestDatabase> {
  const env = pooledEnv(bouncer, db);
  const database: Database = await openDatabase({
    databaseUrl: env.DATABASE_URL,
    databaseDirectUrl: env.DATABASE_DIRECT_URL,
    databasePoolMode: 'transaction',
    databaseStatementTimeoutMs: settings.statementTimeoutMs,
    pgliteDataDir: IN_MEMORY,
  });
  return { ...database, url: env.DATABASE_URL };
}
