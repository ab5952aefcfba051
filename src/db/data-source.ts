import { DataSource } from 'typeorm';
import { DATABASE_DEFAULTS, type DatabasePoolMode } from '../config';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { readBackendPid } from '../sql/cancel';

export interface DataSourceOptions {
  url: string;
  /**
   * The embedded database serves one connection at a time: the pool holds exactly one, for the
   * life of the process (closing it when idle would race the next request for the only slot).
   */
  embedded?: boolean;
  /** Connections in the pool of a real PostgreSQL (DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** DATABASE_STATEMENT_TIMEOUT_MS */
  statementTimeoutMs?: number;
  /** DATABASE_CONNECT_TIMEOUT_MS */
  connectTimeoutMs?: number;
  /** DATABASE_POOL_MODE: `transaction` when `url` is a transaction-mode pooler. */
  poolMode?: DatabasePoolMode;
}

/** The defaults of DATABASE_CONNECT_TIMEOUT_MS and DATABASE_STATEMENT_TIMEOUT_MS (config.ts). */
export const CONNECT_TIMEOUT_MS = DATABASE_DEFAULTS.connectTimeoutMs;
export const STATEMENT_TIMEOUT_MS = DATABASE_DEFAULTS.statementTimeoutMs;

export function createDataSource({
  url,
  embedded = false,
  poolSize = DATABASE_DEFAULTS.poolSize,
  statementTimeoutMs = STATEMENT_TIMEOUT_MS,
  connectTimeoutMs = CONNECT_TIMEOUT_MS,
  poolMode = 'session',
}: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    installExtensions: false,
    poolSize: embedded ? 1 : poolSize,
    connectTimeoutMS: connectTimeoutMs,
    applicationName: 'petstore-gateway',
    extra: {
      ...sessionTimeouts(poolMode, statementTimeoutMs),
      // Client side too: a severed connection never answers, and the server cannot time that out.
      query_timeout: statementTimeoutMs + 1_000,
      idleTimeoutMillis: embedded ? 0 : 10_000,
      // A session's statements can be cancelled by its backend's pid (the embedded database runs one at a time).
      ...(embedded || poolMode === 'transaction' ? {} : { onConnect: readBackendPid({ connectionString: url }) }),
    },
  });
}

/**
 * The server-side timeouts, sent as startup parameters of each session. A transaction-mode pooler
 * refuses them (PgBouncer knows only a few such parameters) and would not keep them per client
 * anyway: behind it the server sessions get them from the database's or role's defaults, or the
 * pooler's own set-up, which database.ts checks at start-up.
 */
function sessionTimeouts(poolMode: DatabasePoolMode, timeoutMs: number): Record<string, number> {
  if (poolMode === 'transaction') return {};
  return { statement_timeout: timeoutMs, idle_in_transaction_session_timeout: timeoutMs };
}
