import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { waitFor } from '../helpers/wait';

let t: TestApp;
let log: CapturedLog;
beforeAll(async () => {
  log = captureLog('info');
  t = await startTestApp({}, { logger: log.logger });
});
afterAll(() => t.close());

describe('/healthz and /readyz', () => {
  it('says the process is up', async () => {
    const response = await request(t.url).get('/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('says the gateway is ready: database answering, migrations applied', async () => {
    const response = await request(t.url).get('/readyz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'ready',
      database: 'ok',
      migrations: 'ok',
      redis: process.env.REDIS_URL ? 'ok' : 'not configured',
    });
  });

  it('says so when a migration is missing, logging the 503 as a warning, not an error', async () => {
    // Put back as it was, its id too: TypeORM takes the row of the highest id for the last migration.
    const [missing] = await t.db.dataSource.query("SELECT id, timestamp, name FROM migrations WHERE name LIKE 'IdempotencyKeys%'");
    await t.db.dataSource.query('DELETE FROM migrations WHERE id = $1', [missing.id]);
    try {
      const response = await request(t.url).get('/readyz').set('X-Request-Id', 'unready-1');
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ status: 'unavailable', database: 'ok', migrations: 'pending' });
      await waitFor(async () => log.lines.some((entry) => entry.requestId === 'unready-1'), 5_000, 'the request line');
      expect(log.lines.find((entry) => entry.requestId === 'unready-1')).toMatchObject({ level: 40, msg: 'request unavailable', status: 503 });
    } finally {
      await t.db.dataSource.query('INSERT INTO migrations (id, timestamp, name) VALUES ($1, $2, $3)', [missing.id, missing.timestamp, missing.name]);
    }
  });

  it('are never rate limited', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 80; i += 1) statuses.add((await request(t.url).get('/healthz')).status);
    expect([...statuses]).toEqual([200]);
    const response = await request(t.url).get('/readyz');
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('/metrics', () => {
  it('exposes requests by surface, operation and status, latency, refusals, pool and process metrics', async () => {
    const { key } = await createApiKey(t, { plan: 'ENTERPRISE', requestsPerMinute: 2, requestsPerDay: 100 });
    await gql(t.url, 'query PetsForMetrics { pets { totalCount } }', undefined, { key });
    await gql(t.url, '{ pets { totalCount } }', undefined, { key });
    await gql(t.url, '{ pets { totalCount } }', undefined, { key }); // refused: 2 a minute
    await request(t.url).get('/pets/abc');
    const response = await request(t.url).get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const text = response.text;
    expect(text).toMatch(/petstore_http_requests_total\{surface="graphql",operation="PetsForMetrics",status="200"\} 1/);
    expect(text).toMatch(/petstore_http_requests_total\{surface="graphql",operation="anonymous",status="429"\} 1/);
    expect(text).toMatch(/petstore_http_requests_total\{surface="rest",operation="GET \/pets\/\{petId\}",status="400"\} 1/);
    expect(text).toMatch(/petstore_http_request_duration_seconds_bucket\{le="0.05",surface="graphql",operation="PetsForMetrics"\} \d/);
    expect(text).toMatch(/petstore_rate_limit_refusals_total\{reason="limited"\} 1/);
    expect(text).toMatch(/petstore_rate_limit_bans_total 0/);
    expect(text).toMatch(/petstore_db_pool_connections\{state="idle"\} \d/);
    expect(text).toMatch(/petstore_db_pool_connections\{state="waiting"\} 0/);
    expect(text).toMatch(/petstore_process_resident_memory_bytes \d/);
  });
});

