import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { generateApiKey } from '../../src/auth/key-secret';
import { MIGRATIONS } from '../../src/db/migrations';
import { type Gateway, startGateway } from '../../src/gateway';
import { adminQuery, testDatabasePrefix, withDatabase } from '../helpers/database';
import { gql } from '../helpers/gql';
import { type PgBouncer, pooledEnv, startPgBouncer, withPgBouncer } from '../helpers/pgbouncer';

withPgBouncer('migrations behind PgBouncer', () => {
  const serverUrl = process.env.DATABASE_URL as string;
  let bouncer: PgBouncer;
  const name = `${testDatabasePrefix()}pooler_${process.pid}_${randomBytes(4).toString('hex')}`;
  let url: string;
  const gateways: Gateway[] = [];
  beforeAll(async () => {
    url = withDatabase(serverUrl, name);
    bouncer = await startPgBouncer(serverUrl, { serverPoolSize: 2 });
    await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await bouncer?.stop();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('migrates an empty database once when three instances start together, locking on the direct connection', async () => {
    // Started as the process starts them, from their settings alone.
    const env = { ...pooledEnv(bouncer, { url }), PORT: '0', ADMIN_API_KEY: generateApiKey(), LOG_LEVEL: 'silent' };
    gateways.push(...(await Promise.all([1, 2, 3].map(() => startGateway({ env, logger: pino({ level: 'silent' }) })))));
    const applied = await adminQuery<{ n: number }>(url, 'SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
    expect(applied).toHaveLength(MIGRATIONS.length);
    expect(applied.every((row) => row.n === 1)).toBe(true);
    // The lock went with the direct session: none is left held for the next instance.
    expect(await adminQuery(url, "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'")).toEqual([{ n: 0 }]);
    for (const gateway of gateways) {
      expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
      expect((await gql(gateway.url, '{ pets(first: 1) { totalCount } }')).data).toEqual({ pets: { totalCount: 0 } });
    }
  });
});
