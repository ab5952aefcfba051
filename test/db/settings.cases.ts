import type { Pool } from 'pg';
import { loadConfig } from '../../src/config';
import { createDataSource } from '../../src/db/data-source';
import { type Database, openDatabase } from '../../src/db/database';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { withPostgres } from '../helpers/services';

const poolOptions = (database: Pick<Database, 'dataSource'>) =>
  (database.dataSource.driver as unknown as { master: Pool & { options: { max: number; query_timeout: number } } }).master.options;

it('gives the pool and timeouts their documented defaults', () => {
  const options = createDataSource({ url: 'postgres://db/shop' }).options as { poolSize: number; connectTimeoutMS: number; extra: Record<string, number> };
  expect(options.poolSize).toBe(10);
  expect(options.connectTimeoutMS).toBe(2_000);
  expect(options.extra).toMatchObject({ statement_timeout: 5_000, idle_in_transaction_session_timeout: 5_000, query_timeout: 6_000 });
});

it('sends no session settings to a transaction-mode pooler, keeping the client-side timeout', () => {
  const options = createDataSource({ url: 'postgres://pgbouncer/shop', poolMode: 'transaction' }).options as { extra: Record<string, number> };
  expect(options.extra).not.toHaveProperty('statement_timeout');
  expect(options.extra).not.toHaveProperty('idle_in_transaction_session_timeout');
  expect(options.extra).toMatchObject({ query_timeout: 6_000 });
});


withPostgres('DATABASE_POOL_SIZE and DATABASE_STATEMENT_TIMEOUT_MS on PostgreSQL', () => {
  let migrated: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    migrated = await createTestDatabase();
    const config = loadConfig({ DATABASE_URL: migrated.url, DATABASE_POOL_SIZE: '3', DATABASE_STATEMENT_TIMEOUT_MS: '300' });
    database = await openDatabase(config);
  });
  afterAll(async () => {
    await database?.close();
    await migrated?.close();
  });

  it('sizes the pool and cancels a statement that runs past the timeout', async () => {
    expect(poolOptions(database).max).toBe(3);
    expect(poolOptions(database).query_timeout).toBe(1_300);
    const [{ statement_timeout }] = (await database.dataSource.query('SHOW statement_timeout')) as { statement_timeout: string }[];
    expect(statement_timeout).toBe('300ms');
    await expect(database.dataSource.query('SELECT pg_sleep(2)')).rejects.toThrow(/statement timeout/);
  });
});
