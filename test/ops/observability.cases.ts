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

  it('keeps operation names bounded: unnamed operations are `anonymous`, counts of names pushed out `other`', async () => {
    // Ten at a time: the names' order is not what the test is about.
    for (let i = 0; i < 210; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) => request(t.url).post('/graphql').set('X-API-Key', t.adminKey).send({ query: `query Op${i + j} { pets(first: 1) { totalCount } }` })),
      );
    }
    const text = (await request(t.url).get('/metrics')).text;
    const names = new Set([...text.matchAll(/petstore_http_requests_total\{surface="graphql",operation="([^"]+)"/g)].map((m) => m[1]));
    // The 200 busiest names, `anonymous` and `other`.
    expect(names.size).toBeLessThanOrEqual(202);
    expect(names.has('other')).toBe(true);
    expect(names.has('anonymous')).toBe(true);
  });
});

describe('request logs', () => {
  it('writes one JSON line per request with its id, caller key id (never the key), operation, status and duration', async () => {
    const { key, id } = await createApiKey(t, { plan: 'PRO' });
    const response = await request(t.url)
      .post('/graphql')
      .set('X-API-Key', key)
      .set('X-Request-Id', 'trace-abc.123')
      .send({ query: 'query LoggedOne { pets { totalCount } }' });
    expect(response.headers['x-request-id']).toBe('trace-abc.123');
    const line = log.lines.find((entry) => entry.requestId === 'trace-abc.123');
    expect(line).toMatchObject({
      msg: 'request',
      method: 'POST',
      path: '/graphql',
      surface: 'graphql',
      operation: 'LoggedOne',
      status: 200,
      keyId: id,
      durationMs: expect.any(Number),
    });
    expect(JSON.stringify(log.lines)).not.toContain(key);
  });

  it('generates a request id when none (or an unsafe one) is sent', async () => {
    const plain = await request(t.url).get('/healthz');
    expect(plain.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await request(t.url).get('/healthz').set('X-Request-Id', 'x'.repeat(300));
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs an internal error with its stack, and sends none of it', async () => {
    await t.db.dataSource.query('ALTER TABLE categories RENAME COLUMN name TO name_moved');
    try {
      const response = await request(t.url).post('/graphql').set('X-Request-Id', 'broken-1').send({ query: '{ categories { nodes { name } } }' });
      expect(JSON.stringify(response.body)).not.toMatch(/name_moved|at .*\.ts/);
      const error = log.lines.find((entry) => entry.msg === 'unexpected GraphQL error') as { err?: { stack?: string } } | undefined;
      expect(error?.err?.stack).toMatch(/QueryFailedError/);
    } finally {
      await t.db.dataSource.query('ALTER TABLE categories RENAME COLUMN name_moved TO name');
    }
  });
});
