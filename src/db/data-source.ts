import { DataSource } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

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
}

/**
 * Default bounds that keep an unreachable or stuck database from holding requests (README
 * "Operating it"); the settings above override them.
 */
export const CONNECT_TIMEOUT_MS = 2_000;
export const STATEMENT_TIMEOUT_MS = 5_000;

export function createDataSource({
  url,
  embedded = false,
  poolSize = 10,
  statementTimeoutMs = STATEMENT_TIMEOUT_MS,
  connectTimeoutMs = CONNECT_TIMEOUT_MS,
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
      statement_timeout: statementTimeoutMs,
      idle_in_transaction_session_timeout: statementTimeoutMs,
      // Client side too: a severed connection never answers, and the server cannot time that out.
      query_timeout: statementTimeoutMs + 1_000,
      idleTimeoutMillis: embedded ? 0 : 10_000,
    },
  });
}
