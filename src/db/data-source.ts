import { DataSource } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export interface DataSourceOptions {
  url: string;
  /** Connections in the pool; the embedded database takes exactly one. */
  poolSize?: number;
}

/** Bounds that keep an unreachable or stuck database from holding requests (README "Operating it"). */
export const CONNECT_TIMEOUT_MS = 2_000;
export const STATEMENT_TIMEOUT_MS = 5_000;

export function createDataSource({ url, poolSize = 10 }: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    installExtensions: false,
    poolSize,
    connectTimeoutMS: CONNECT_TIMEOUT_MS,
    applicationName: 'petstore-gateway',
    extra: {
      statement_timeout: STATEMENT_TIMEOUT_MS,
      idle_in_transaction_session_timeout: STATEMENT_TIMEOUT_MS,
      // Client side too: a severed connection never answers, and the server cannot time that out.
      query_timeout: STATEMENT_TIMEOUT_MS + 1_000,
    },
  });
}
