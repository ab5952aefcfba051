import { DataSource, MigrationExecutor } from 'typeorm';
import type { Config } from '../config';
import { poolOf } from '../sql/pool';
import { DatabaseConnectError, describeConnectFailure } from './connect-failure';
import { createDataSource, type DataSourceOptions } from './data-source';
import { startEmbeddedPostgres } from './embedded';

export interface Database {
  dataSource: DataSource;
  /** True when this process runs its own PGlite. */
  embedded: boolean;
  close(): Promise<void>;
}

/** Any number: the key of the advisory lock that lets one instance at a time migrate. */
const MIGRATION_LOCK = 7_411_023;

/**
 * Connects to PostgreSQL (`DATABASE_URL`) or starts the embedded one, then applies pending
 * migrations under an advisory lock, so that instances starting together migrate once.
 */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'pgliteDataDir'> &
    Partial<Pick<Config, 'databasePoolSize' | 'databaseStatementTimeoutMs' | 'databaseConnectTimeoutMs'>>,
): Promise<Database> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.pgliteDataDir);
  let dataSource: DataSource;
  try {
    dataSource = await connectDatabase(embedded?.url ?? (config.databaseUrl as string), {
      embedded: !!embedded,
      poolSize: config.databasePoolSize,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
    });
  } catch (error) {
    await embedded?.stop();
    const line = config.databaseUrl && describeConnectFailure(error, config.databaseUrl);
    throw line ? new DatabaseConnectError(line, error) : error;
  }
  return {
    dataSource,
    embedded: embedded !== undefined,
    async close() {
      await dataSource.destroy();
      await embedded?.stop();
    },
  };
}

/** A migrated DataSource on `url`; the embedded database takes one connection. */
export async function connectDatabase(
  url: string,
  options: Omit<DataSourceOptions, 'url' | 'embedded'> & { embedded: boolean },
): Promise<DataSource> {
  const { embedded } = options;
  const dataSource = createDataSource({ url, ...options });
  await dataSource.initialize();
  try {
    if (embedded) forgetPreparedStatementsOnReconnect(dataSource);
    await migrate(dataSource);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

/**
 * PGlite serves every socket connection from its one session, so statements prepared on a
 * connection that has since closed are still there when the pool reconnects, and preparing them
 * again would fail. Each new connection therefore starts by dropping them.
 */
function forgetPreparedStatementsOnReconnect(dataSource: DataSource): void {
  poolOf(dataSource).on('connect', (client) => {
    client.query('DEALLOCATE ALL').catch(() => undefined);
  });
}

export async function migrate(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'each';
    await executor.executePendingMigrations();
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}
