import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { type Database, openDatabase } from '../../src/db/database';
import { IN_MEMORY } from '../../src/db/embedded';

export interface TestDatabase extends Database {
  /** The postgres:// URL of this test's own database. */
  url: string;
}

/**
 * A fresh database for one test file: with DATABASE_URL, a new database on that server, dropped
 * afterwards; without it, an in-memory PGlite. Either way, migrated as the gateway migrates.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const database = await openDatabase({ pgliteDataDir: IN_MEMORY });
    return { ...database, url: dataSourceUrl(database) };
  }
  const name = `petstore_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = withDatabase(serverUrl, name);
  const database = await openDatabase({ databaseUrl: url, pgliteDataDir: IN_MEMORY });
  return {
    ...database,
    url,
    async close() {
      await database.close();
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

function dataSourceUrl(database: Database): string {
  return (database.dataSource.options as { url: string }).url;
}

/** The URL of database `name` on the server `serverUrl` points at. */
export function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One statement on the server's default database: creating or dropping another. */
export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
