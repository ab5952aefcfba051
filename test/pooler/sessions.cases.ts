import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { openPooled, type PgBouncer, startPgBouncer, withPgBouncer } from '../helpers/pgbouncer';

withPgBouncer('session settings behind PgBouncer', () => {
  const serverUrl = process.env.DATABASE_URL as string;
  let direct: TestDatabase;
  const bouncers: PgBouncer[] = [];
  const opened: TestDatabase[] = [];
  const bouncer = async (sessionTimeoutMs: number) => {
    const started = await startPgBouncer(serverUrl, { serverPoolSize: 2, sessionTimeoutMs });
    bouncers.push(started);
    return started;
  };
  beforeAll(async () => {
    direct = await createTestDatabase();
  });
  afterAll(async () => {
    for (const database of opened) await database.close();
    await direct?.close();
    for (const started of bouncers) await started.stop();
  });

  it('cancels a statement past DATABASE_STATEMENT_TIMEOUT_MS, the pooler giving its sessions the timeout', async () => {
    const pooled = await openPooled(await bouncer(300), direct, { statementTimeoutMs: 300 });
    opened.push(pooled);
    await expect(pooled.dataSource.query('SELECT pg_sleep(2)')).rejects.toThrow(/statement timeout/);
    expect(await pooled.dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('refuses to start on sessions without the timeouts, saying how to set them', async () => {
    const database = new URL(direct.url).pathname.slice(1);
    await expect(openPooled(await bouncer(0), direct)).rejects.toThrow(
      new RegExp(
        '^Database error: sessions behind the pooler at DATABASE_URL run with statement_timeout off and idle_in_transaction_session_timeout off, ' +
          `where DATABASE_STATEMENT_TIMEOUT_MS is 5000 ms; .*ALTER DATABASE ${database} SET statement_timeout = 5000;`,
      ),
    );
  });

  it('names DATABASE_DIRECT_URL when the direct connection cannot be made', async () => {
    const unreachable = new URL(direct.url);
    unreachable.port = '1';
    await expect(openPooled(await bouncer(5_000), { url: unreachable.toString() })).rejects.toThrow(
      /^Database error: PostgreSQL on 127\.0\.0\.1:1 cannot be reached \(ECONNREFUSED\); is it running, and is DATABASE_DIRECT_URL right\?$/,
    );
  });

  it('refuses to start on sessions whose timeouts are longer than DATABASE_STATEMENT_TIMEOUT_MS', async () => {
    await expect(openPooled(await bouncer(5_000), direct, { statementTimeoutMs: 1_000 })).rejects.toThrow(/statement_timeout 5000 ms and idle_in_transaction_session_timeout 5000 ms, where DATABASE_STATEMENT_TIMEOUT_MS is 1000 ms/);
  });
});
