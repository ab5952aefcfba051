import { randomBytes } from 'node:crypto';
import { MIGRATIONS } from '../../src/db/migrations';
import { adminQuery, type TestDatabase, withDatabase } from '../helpers/database';
import { openPooled, type PgBouncer, startPgBouncer, withPgBouncer } from '../helpers/pgbouncer';

withPgBouncer('migrations behind PgBouncer', () => {
  const serverUrl = process.env.DATABASE_URL as string;
  let bouncer: PgBouncer;
  const name = `petstore_pooler_${process.pid}_${randomBytes(4).toString('hex')}`;
  let url: string;
  const opened: TestDatabase[] = [];
  beforeAll(async () => {
    url = withDatabase(serverUrl, name);
    bouncer = await startPgBouncer(serverUrl, { serverPoolSize: 2 });
    await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  });
  afterAll(async () => {
    for (const database of opened) await database.close();
    await bouncer?.stop();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('migrates an empty database once when three instances start together, locking on the direct connection', async () => {
    opened.push(...(await Promise.all([1, 2, 3].map(() => openPooled(bouncer, { url })))));
    const applied = await opened[0].dataSource.query('SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
    expect(applied).toHaveLength(MIGRATIONS.length);
    expect(applied.every((row: { n: number }) => row.n === 1)).toBe(true);
    // The lock went with the direct session: none is left held for the next instance.
    expect(await opened[0].dataSource.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'")).toEqual([{ n: 0 }]);
  });
});
