import request from 'supertest';
import type { DataSource } from 'typeorm';
import { ApiKeyService, KEY_CACHE_TTL_MS, keyCache } from '../../src/auth/api-key.service';
import { connectDatabase } from '../../src/db/database';
import { isDatabaseUnavailable } from '../../src/sql/pg-errors';
import { Statements } from '../../src/sql/statements';
import { startTestApp, type TestApp, DATABASE_BOUND } from '../helpers/app';
import { createApiKey, placeOrder, stockedPet } from '../helpers/builders';
import { createTestDatabase, startEmbeddedTestPostgres } from '../helpers/database';
import { wsUrl } from '../helpers/live';
import { rawSocket } from '../helpers/raw-socket';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';
import { printFigure } from '../helpers/figures';

/**
 * The gateway reaches its database through a TCP proxy that the test cuts and restores: an
 * outage without stopping the machine's PostgreSQL.
 */
let proxy: TcpProxy;
let dataSource: DataSource;
let closeUpstream: () => Promise<void>;
let t: TestApp;

/**
 * DATABASE_STATEMENT_TIMEOUT_MS: short, since the hung-database case waits for it to fire, and
 * still far above what any statement of these tests takes.
 */
const STATEMENT_TIMEOUT_MS = 1_000;

beforeAll(async () => {
  const upstream = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const embedded = upstream ? undefined : await startEmbeddedTestPostgres();
  const url = new URL(upstream?.url ?? embedded!.url);
  if (upstream) await upstream.dataSource.destroy(); // the gateway's own pool is the only client
  proxy = await tcpProxy({ host: url.hostname, port: Number(url.port) });
  url.port = String(proxy.port);
  dataSource = await connectDatabase(url.toString(), { embedded: !!embedded, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  closeUpstream = async () => (upstream ? upstream.close().catch(() => undefined) : embedded?.stop());
  t = await startTestApp({ DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), ...DATABASE_BOUND }, { db: { dataSource, embedded: !!embedded, url: url.toString(), close: async () => {} } });
});

afterAll(async () => {
  await t.close();
  await dataSource.destroy();
  await proxy.close();
  await closeUpstream();
});

/** Resolves once `condition` holds: the traffic has reached the phase the test waits for. */
const until = (condition: () => boolean) => waitFor(condition, 10_000, 'the traffic to reach this phase', 10);

const ask = (key?: string) => {
  const call = request(t.url).post('/graphql').send({ query: '{ pets(first: 1) { totalCount } }' });
  return key ? call.set('X-API-Key', key) : call;
};

it('answers 503 while the database is away, and recovers by itself', async () => {
  const { key } = await createApiKey(t, { plan: 'BUSINESS' });
  expect((await ask(key)).status).toBe(200);

  await proxy.cut();
  const outage: { status: number; code: string; ms: number }[] = [];
  for (const send of [() => ask(), () => ask(key), () => request(t.url).get('/pets/1'), () => request(t.url).get('/store/orders').set('X-API-Key', key)]) {
    for (let i = 0; i < 5; i += 1) {
      const started = Date.now();
      const response = await send();
      outage.push({ status: response.status, code: response.body.code ?? response.body.errors?.[0]?.extensions?.code, ms: Date.now() - started });
      expect(response.headers['x-ratelimit-limit']).toBeDefined();
    }
  }
  const ready = await request(t.url).get('/readyz');
  expect(ready.status).toBe(503);
  expect(ready.body).toMatchObject({ status: 'unavailable', database: 'down' });

  expect(outage.every(({ status, code }) => status === 503 && code === 'SERVICE_UNAVAILABLE')).toBe(true);
  const slowest = Math.max(...outage.map(({ ms }) => ms));

  await proxy.restore();
  const restored = Date.now();
  await waitFor(
    async () => {
      const [query, ready] = await Promise.all([ask(key), request(t.url).get('/readyz')]);
      return query.status === 200 && ready.status === 200;
    },
    10_000,
    'the gateway to recover',
  );
  const recoveredAfter = Date.now() - restored;
  printFigure(
    `database outage: ${outage.length} requests, all 503 SERVICE_UNAVAILABLE, slowest ${slowest} ms; recovered ${recoveredAfter} ms after the database returned`,
  );
});

// Row 3b of the outage: before, such a key was counted as an unverified caller on a FREE-sized
// quota, refused 429 and then banned while the database was away.
it('answers a key it cannot check 503 with Retry-After before counting it: never 429 or banned for the outage', async () => {
  const { key } = await createApiKey(t, { plan: 'FREE' }); // never looked up by the gateway yet
  await proxy.cut();
  const answers: { status: number; code: unknown; retryAfter?: string; counted: boolean }[] = [];
  // More than FREE's 60 a minute.
  for (let i = 0; i < 70; i += 1) {
    const response = await ask(key);
    answers.push({ status: response.status, code: response.body.errors?.[0]?.extensions?.code, retryAfter: response.headers['retry-after'], counted: 'x-ratelimit-limit' in response.headers });
  }
  // REST and a Server-Sent Events stream alike.
  const rest = await request(t.url).get('/store/orders').set('X-API-Key', key);
  const stream = await request(t.url)
    .post('/graphql/stream')
    .set({ 'X-API-Key': key, Accept: 'text/event-stream' })
    .send({ query: 'subscription { petChanged { id } }' });
  for (const response of [rest, stream]) {
    const code = response.body.code ?? response.body.errors?.[0]?.extensions?.code;
    answers.push({ status: response.status, code, retryAfter: response.headers['retry-after'], counted: 'x-ratelimit-limit' in response.headers });
  }
  await proxy.restore();
  expect(answers.filter(({ status, code, retryAfter, counted }) => status !== 503 || code !== 'SERVICE_UNAVAILABLE' || !retryAfter || counted)).toEqual([]);
  await waitFor(async () => (await ask(key)).status === 200, 10_000, 'the key to be served once the database is back');
  const served = await ask(key);
  expect(served.status).toBe(200);
  expect(Number(served.headers['x-ratelimit-remaining'])).toBeGreaterThan(0);
});

it('closes a WebSocket whose key cannot be checked 1011 SERVICE_UNAVAILABLE, the key in its upgrade header or in connection_init', async () => {
  const { key } = await createApiKey(t, { plan: 'PRO' });
  await proxy.cut();
  try {
    const inHeader = await rawSocket(wsUrl(t), { headers: { 'X-API-Key': key } });
    inHeader.send({ type: 'connection_init' });
    const inPayload = await rawSocket(wsUrl(t));
    inPayload.send({ type: 'connection_init', payload: { 'X-API-Key': key } });
    for (const socket of [inHeader, inPayload]) expect(await socket.closed).toEqual({ code: 1011, reason: 'SERVICE_UNAVAILABLE' });
  } finally {
    await proxy.restore();
  }
});

it('answers for a key from its last lookup while the database cannot be asked, however old', async () => {
  let now = 1_000; // not 0: lru-cache never ages an entry stored at time 0
  const apiKeys = new ApiKeyService(new Statements(dataSource), keyCache(() => now));
  const { key, id } = await createApiKey(t, { plan: 'PRO' });
  const unseen = await createApiKey(t, { plan: 'PRO' });
  expect(await apiKeys.authenticate(key)).toMatchObject({ id });
  now += KEY_CACHE_TTL_MS * 100;
  await proxy.cut();
  try {
    expect(await apiKeys.authenticate(key)).toMatchObject({ id });
    const failure = await apiKeys.authenticate(unseen.key).catch((error: unknown) => error);
    expect(isDatabaseUnavailable(failure)).toBe(true);
  } finally {
    await proxy.restore();
  }
});

// The frozen database never answers: a 503 can only come from the statement timeout.
it('does not let a hung database hold requests: the statement timeout ends them in 503', async () => {
  expect((await ask()).status).toBe(200);
  proxy.freeze();
  const started = Date.now();
  const responses = await Promise.all([ask(), request(t.url).get('/pets/1'), request(t.url).get('/readyz')]);
  const elapsed = Date.now() - started;
  expect(responses.map((response) => response.status)).toEqual([503, 503, 503]);
  await proxy.restore();
  await waitFor(async () => (await ask()).status === 200, 10_000, 'the gateway to recover');
  printFigure(`hung database: requests answered 503 after ${elapsed} ms (statement timeout ${STATEMENT_TIMEOUT_MS} ms)`);
});

it('loses no committed order and leaves no half-applied transition when the database drops mid-traffic', async () => {
  const petId = await stockedPet(t, 1000);
  // placeOrder allows 10 a minute per key: enough keys for the traffic to outlast the outage.
  const keys = await Promise.all(Array.from({ length: 40 }, async () => (await createApiKey(t, { plan: 'BUSINESS' })).key));
  const placed: string[] = [];
  const statuses: number[] = [];
  let running = true;
  const traffic = (async () => {
    for (let round = 0; running; round += 1) {
      const batch = keys.slice((round * 4) % keys.length, ((round * 4) % keys.length) + 4);
      const results = await Promise.all(batch.map((key) => placeOrder(t, key, petId, 1)));
      for (const result of results) {
        statuses.push(result.status);
        if (result.data?.placeOrder) placed.push(result.data.placeOrder.id);
      }
    }
  })();
  // Paced by the traffic, not the clock, so a slow machine cannot skip a phase: orders placed
  // before the cut, refusals during it, and orders placed again after it.
  await until(() => placed.length > 0);
  await proxy.cut();
  const sentBeforeCut = statuses.length;
  await until(() => statuses.slice(sentBeforeCut).includes(503));
  await proxy.restore();
  const placedBeforeRestore = placed.length;
  await until(() => placed.length > placedBeforeRestore);
  running = false;
  await traffic;

  const [{ orders, taken }] = await dataSource.query(
    'SELECT count(*)::int AS orders, coalesce(sum(quantity), 0)::int AS taken FROM orders WHERE pet_id = $1',
    [petId],
  );
  const [{ quantity }] = await dataSource.query('SELECT quantity FROM inventory_items WHERE pet_id = $1', [petId]);
  const stored = await dataSource.query('SELECT id FROM orders WHERE id = ANY($1::bigint[])', [placed]);
  // Every order a client was told about exists, and stock and orders agree to the unit.
  expect(stored).toHaveLength(placed.length);
  expect(orders).toBeGreaterThanOrEqual(placed.length);
  expect(quantity + taken).toBe(1000);
  expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
  expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
  expect(placed.length).toBeGreaterThan(0);
  printFigure(
    `orders across an outage: ${statuses.length} placeOrder calls, ${placed.length} placed, ${statuses.filter((s) => s === 503).length} answered 503; ` +
      `stock ${quantity} + ordered ${taken} = 1000 (${orders} orders stored)`,
  );
});
