/**
 * The DataSource the TypeORM CLI uses (`npm run migration:run`, `npm run migration:generate`).
 * It needs DATABASE_URL: migrations are generated against, and applied to, a real PostgreSQL;
 * DATABASE_DIRECT_URL instead when set, as the gateway migrates past a transaction-mode pooler.
 */
import 'reflect-metadata';
import { Client } from 'pg';
import { DATABASE_DEFAULTS } from './src/config';
import { describeConnectFailure } from './src/db/connect-failure';
import { createDataSource } from './src/db/data-source';
import { MigrationCliLogger } from './src/db/migration-cli-logger';

const variable = process.env.DATABASE_DIRECT_URL ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL';
const url = process.env[variable];
if (!url) {
  console.error('DATABASE_URL: expected a postgres:// URL for the TypeORM CLI, got nothing');
  process.exit(1);
}

/**
 * Connects once before handing the DataSource over: the CLI would print a failure to connect as
 * a driver error object with its stack; a missing database or a refused user is said in one line.
 */
async function reachableDataSource(url: string) {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: DATABASE_DEFAULTS.connectTimeoutMs });
  try {
    await client.connect();
  } catch (error) {
    const line = describeConnectFailure(error, url, variable);
    if (line === undefined) throw error;
    console.error(line);
    process.exit(1);
  } finally {
    await client.end().catch(() => undefined);
  }
  return createDataSource({ url, poolSize: 2 }).setOptions({ logger: new MigrationCliLogger() });
}

// The TypeORM CLI awaits an exported promise of a DataSource.
export const dataSource = reachableDataSource(url);
