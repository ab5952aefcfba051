import { DataSource, MigrationExecutor } from 'typeorm';
import type { Config } from '../config';
import { createDataSource } from './data-source';
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
export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'pgliteDataDir'>): Promise<Database> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.pgliteDataDir);
  const dataSource = createDataSource(
    embedded ? { url: embedded.url, poolSize: 1 } : { url: config.databaseUrl as string },
  );
  try {
    await dataSource.initialize();
    await migrate(dataSource);
  } catch (error) {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
    throw error;
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
