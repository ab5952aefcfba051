import { setTimeout as delay } from 'node:timers/promises';
import { DataSource, MigrationExecutor } from 'typeorm';
import type { Config } from '../config';
import { guardCheckouts, poolOf } from '../sql/pool';
import { isDatabaseUnavailable } from '../sql/pg-errors';
import { runUnnamedStatements } from '../sql/prepared';
import { DatabaseConnectError, describeConnectFailure } from './connect-failure';
import { createDataSource, type DataSourceOptions, STATEMENT_TIMEOUT_MS } from './data-source';
import type { EmbeddedPostgres } from './embedded';

export interface Database {
  dataSource: DataSource;
  /** True when this process runs its own PGlite. */
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * The embedded database runs in this process: its first connection waits for this process's CPU,
 * never for a network, and a start-up that held the event loop past DATABASE_CONNECT_TIMEOUT_MS
 * on a machine busy with other work timed it out. Such a connection is tried again, this long.
 */
const EMBEDDED_CONNECT_PATIENCE_MS = 60_000;

/** Between two tries: a failure that comes at once (a refused connection) is not tried again in a busy loop. */
const RETRY_PAUSE_MS = 250;

/** `connect`'s data source, tried again while the database cannot be reached, until `patienceMs` has passed. */
async function connectedWithin(patienceMs: number, connect: () => Promise<DataSource>): Promise<DataSource> {
  const giveUpAt = Date.now() + patienceMs;
  for (;;) {
    try {
      return await connect();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() >= giveUpAt) throw error;
    }
    await delay(RETRY_PAUSE_MS);
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Any number: the key of the advisory lock that lets one instance at a time migrate. */
const MIGRATION_LOCK = 7_411_023;

type DatabaseSettings = 'databasePoolSize' | 'databaseStatementTimeoutMs' | 'databaseConnectTimeoutMs' | 'databasePoolMode' | 'databaseDirectUrl';

/**
 * Connects to PostgreSQL (`DATABASE_URL`) or starts the embedded one, then applies pending
 * migrations under an advisory lock, so that instances starting together migrate once.
 */
export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'pgliteDataDir'> & Partial<Pick<Config, DatabaseSettings>>): Promise<Database> {
  const embedded = config.databaseUrl ? undefined : await startEmbedded(config.pgliteDataDir);
  let dataSource: DataSource;
  const connect = () =>
    connectDatabase(embedded?.url ?? (config.databaseUrl as string), {
      embedded: !!embedded,
      poolSize: config.databasePoolSize,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      poolMode: config.databasePoolMode,
      directUrl: config.databaseDirectUrl,
    });
  try {
    dataSource = embedded ? await connectedWithin(EMBEDDED_CONNECT_PATIENCE_MS, connect) : await connect();
  } catch (error) {
    await embedded?.stop();
    if (error instanceof DatabaseConnectError) throw error;
    const line = config.databaseUrl ? describeConnectFailure(error, config.databaseUrl) : `Database error: the embedded database (PGLITE_DATA_DIR=${config.pgliteDataDir}) could not be opened: ${messageOf(error)}`;
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

/**
 * A migrated DataSource on `url`; the embedded database takes one connection. With `directUrl`
 * the migrations run there, on a connection of their own: behind a transaction-mode pooler
 * (`poolMode: 'transaction'`) the advisory lock would outlive nothing, since a pooled session
 * lasts one transaction.
 */
export async function connectDatabase(
  url: string,
  options: Omit<DataSourceOptions, 'url' | 'embedded'> & { embedded: boolean; directUrl?: string },
): Promise<DataSource> {
  const { embedded, directUrl, ...settings } = options;
  if (settings.poolMode === 'transaction' && (embedded || directUrl === undefined)) {
    throw new Error('A transaction-mode pool needs PostgreSQL at DATABASE_URL and a direct URL for the migrations');
  }
  const dataSource = createDataSource({ url, embedded, ...settings });
  await dataSource.initialize();
  guardCheckouts(poolOf(dataSource));
  try {
    if (embedded) forgetPreparedStatementsOnReconnect(dataSource);
    if (settings.poolMode === 'transaction') runUnnamedStatements(poolOf(dataSource));
    await (directUrl === undefined ? migrate(dataSource) : migrateOn(directUrl, settings));
    if (settings.poolMode === 'transaction') await checkPooledTimeouts(dataSource, settings.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

/** Migrates the database at `directUrl` through one session-mode connection, closed afterwards. */
async function migrateOn(directUrl: string, settings: Omit<DataSourceOptions, 'url'>): Promise<void> {
  const direct = createDataSource({ ...settings, url: directUrl, poolSize: 1, poolMode: 'session' });
  try {
    await direct.initialize();
    guardCheckouts(poolOf(direct));
  } catch (error) {
    const line = describeConnectFailure(error, directUrl, 'DATABASE_DIRECT_URL');
    throw line ? new DatabaseConnectError(line, error) : error;
  }
  try {
    await migrate(direct);
  } finally {
    await direct.destroy();
  }
}

/**
 * Through a transaction-mode pooler the gateway cannot give its sessions the statement and
 * idle-in-transaction timeouts (data-source.ts): the server sessions must have them already, from
 * the database's or role's defaults or the pooler's set-up. A session without them, or with
 * longer ones, would break DATABASE_STATEMENT_TIMEOUT_MS's promise, so start-up stops, saying how
 * to set them.
 */
async function checkPooledTimeouts(dataSource: DataSource, limitMs: number): Promise<void> {
  const { rows } = await poolOf(dataSource).query<{ name: string; setting: string; database: string }>(
    "SELECT name, setting, quote_ident(current_database()) AS database FROM pg_settings WHERE name IN ('statement_timeout', 'idle_in_transaction_session_timeout') ORDER BY name DESC",
  );
  const wrong = rows.filter(({ setting }) => Number(setting) === 0 || Number(setting) > limitMs);
  if (wrong.length === 0) return;
  const found = wrong.map(({ name, setting }) => `${name} ${setting === '0' ? 'off' : `${setting} ms`}`).join(' and ');
  const { database } = rows[0];
  throw new DatabaseConnectError(
    `Database error: sessions behind the pooler at DATABASE_URL run with ${found}, where DATABASE_STATEMENT_TIMEOUT_MS is ${limitMs} ms; ` +
      `a transaction-mode pooler cannot carry the gateway's own, so set them on the server, e.g. ` +
      `ALTER DATABASE ${database} SET statement_timeout = ${limitMs}; ALTER DATABASE ${database} SET idle_in_transaction_session_timeout = ${limitMs}; ` +
      `(or in PgBouncer's connect_query), and reconnect the pooler's server connections.`,
    undefined,
  );
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

/**
 * The embedded PostgreSQL, its module required only here: a gateway on `DATABASE_URL` never loads
 * PGlite (its 510 KB bundle and socket server stay out of the heap).
 */
function startEmbedded(dataDir: string): Promise<EmbeddedPostgres> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startEmbeddedPostgres } = require('./embedded') as typeof import('./embedded');
  return startEmbeddedPostgres(dataDir);
}
