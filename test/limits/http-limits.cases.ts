import request from 'supertest';
import { generateApiKey } from '../../src/auth/key-secret';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, placeOrder, stockedPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

const QUERY = '{ pets(first: 1) { totalCount } }';
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

let t: TestApp;
beforeAll(async () => {
  // Bursts here test the windows and field limits alone; test/limits/in-flight.cases.ts tests the in-flight bound.
  t = await startTestApp({}, { limitInFlight: false });
});
afterAll(() => t.close());

const freeKey = async () => (await createApiKey(t, { plan: 'FREE' })).key;
const ask = (key: string) => request(t.url).post('/graphql').set('X-API-Key', key).send({ query: QUERY });

describe('headers on every response', () => {
  it.each([
    ['GraphQL 200', () => request(t.url).post('/graphql').send({ query: QUERY }), 200],
    ['GraphQL 400', () => request(t.url).post('/graphql').send({ query: '{ pets {' }), 400],
    ['GraphQL 401', () => request(t.url).post('/graphql').set('X-API-Key', generateApiKey()).send({ query: QUERY }), 401],
    ['GraphQL 413', () => request(t.url).post('/graphql').set('Content-Type', 'application/json').send(`{"query":"${'x'.repeat(110_000)}"}`), 413],
    ['REST 200', () => request(t.url).get('/openapi.json'), 200],
    ['REST 400', () => request(t.url).get('/pets/abc'), 400],
    ['REST 401', () => request(t.url).get('/store/orders'), 401],
    ['REST 404', () => request(t.url).get('/pets/424242'), 404],
    ['unknown path 404', () => request(t.url).get('/nowhere'), 404],
  ])('%s', async (_label, send, status) => {
    const response = await send();
    expect(response.status).toBe(status);
    for (const header of RATE_HEADERS) expect(response.headers).toHaveProperty(header);
  });

  it('describes both windows in the IETF fields and the one that runs out first in X-RateLimit-*', async () => {
    const key = await freeKey();
    const response = await ask(key);
    const now = Math.floor(Date.now() / 1000);
    expect(response.headers['ratelimit-policy']).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
    expect(response.headers.ratelimit).toMatch(/^"minute";r=59;t=(59|60), "day";r=999;t=(86399|86400)$/);
    expect(response.headers['x-ratelimit-limit']).toBe('60');
    expect(response.headers['x-ratelimit-remaining']).toBe('59');
    expect(Number(response.headers['x-ratelimit-reset']) - now).toBeGreaterThanOrEqual(59);
    expect(Number(response.headers['x-ratelimit-reset']) - now).toBeLessThanOrEqual(61);
  });

  it('answers a 500 with the headers too', async () => {
    await t.db.dataSource.query('ALTER TABLE categories RENAME COLUMN name TO name_moved');
    try {
      const broken = await request(t.url).post('/graphql').send({ query: '{ categories { nodes { name } } }' });
      expect(broken.body.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
      expect(broken.body.errors[0].extensions.status).toBe(500);
      for (const header of RATE_HEADERS) expect(broken.headers).toHaveProperty(header);
    } finally {
      await t.db.dataSource.query('ALTER TABLE categories RENAME COLUMN name_moved TO name');
    }
  });
});

describe('quotas', () => {
  it('accepts exactly 60 requests a minute from a FREE key, then 429 with Retry-After until the reset', async () => {
    const key = await freeKey();
    for (let i = 0; i < 60; i += 1) expect((await ask(key)).status).toBe(200);
    const refused = await ask(key);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      errors: [{ message: expect.stringMatching(/^Rate limit exceeded: 60 requests per minute; retry in \d+ s$/), extensions: { code: 'RATE_LIMITED', status: 429 } }],
    });
    const retryAfter = Number(refused.headers['retry-after']);
    const untilReset = Number(refused.headers['x-ratelimit-reset']) - Date.now() / 1000;
    expect(Math.abs(retryAfter - untilReset)).toBeLessThanOrEqual(1);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    // REST shares the quota, and answers with the Error object.
    const rest = await request(t.url).get('/openapi.json').set('X-API-Key', key);
    expect(rest.status).toBe(429);
    expect(rest.body).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
  });

  it('reports the day window when an ENTERPRISE key runs out of its day and minute together', async () => {
    // A day quota is never below the minute quota; when both run out, the day frees last and refuses.
    const { key } = await createApiKey(t, { plan: 'ENTERPRISE', requestsPerMinute: 5, requestsPerDay: 5 });
    for (let i = 1; i <= 5; i += 1) {
      const response = await ask(key);
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBe('5');
      expect(response.headers['x-ratelimit-remaining']).toBe(String(5 - i));
    }
    const sixth = await ask(key);
    expect(sixth.status).toBe(429);
    expect(sixth.headers['x-ratelimit-limit']).toBe('5');
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(86_000);
    expect(sixth.body.errors[0].message).toMatch(/5 requests per day/);
  });

  it('counts a request with an invalid key against its client address', async () => {
    const before = await request(t.url).get('/openapi.json');
    const invalid = await request(t.url).get('/openapi.json').set('X-API-Key', generateApiKey());
    expect(invalid.status).toBe(401);
    const after = await request(t.url).get('/openapi.json');
    expect(Number(after.headers['x-ratelimit-remaining'])).toBe(Number(before.headers['x-ratelimit-remaining']) - 2);
  });

  it('tells a caller its own quota through the rateLimit query, as the headers do', async () => {
    const { key } = await createApiKey(t, { plan: 'PRO' });
    const result = await gql(t.url, '{ rateLimit { plan limit remaining resetAt window } }', undefined, { key });
    expect(result.data?.rateLimit).toMatchObject({ plan: 'PRO', limit: 300, remaining: 299, window: 'MINUTE' });
    expect(Math.ceil(Date.parse(result.data?.rateLimit.resetAt) / 1000)).toBe(Number(result.headers['x-ratelimit-reset']));
    const anonymous = await gql(t.url, '{ rateLimit { plan limit } }');
    expect(anonymous.data?.rateLimit).toEqual({ plan: 'FREE', limit: 60 });
  });
});

describe('bans', () => {
  it('bans a key that keeps sending while limited, until an admin lifts it', async () => {
    const { key, id } = await createApiKey(t, { plan: 'FREE' });
    for (let i = 0; i < 60; i += 1) await ask(key);
    for (let i = 0; i < 10; i += 1) expect((await ask(key)).status).toBe(429);
    const banned = await ask(key);
    expect(banned.status).toBe(403);
    expect(banned.body.errors[0].extensions).toEqual({ code: 'API_KEY_BANNED', status: 403 });
    expect(Number(banned.headers['retry-after'])).toBe(900);
    for (const header of RATE_HEADERS) expect(banned.headers).toHaveProperty(header);
    const during = await request(t.url).get('/openapi.json').set('X-API-Key', key);
    expect(during.status).toBe(403);
    expect(during.body.code).toBe('API_KEY_BANNED');
    expect(Number(during.headers['retry-after'])).toBeLessThanOrEqual(900);

    const listed = await gql(t.url, '{ apiKeys(first: 100) { nodes { id bannedUntil } } }', undefined, { key: t.adminKey });
    const bannedUntil = listed.data?.apiKeys.nodes.find((node: any) => node.id === id).bannedUntil;
    expect(Date.parse(bannedUntil) - Date.now()).toBeGreaterThan(890_000);

    const unban = await gql(t.url, `mutation { unbanApiKey(id: "${id}") { id bannedUntil } }`, undefined, { key: t.adminKey });
    expect(unban.data?.unbanApiKey).toEqual({ id, bannedUntil: null });
    // The windows stay as they were: the minute is still used up.
    expect((await ask(key)).status).toBe(429);
  });

  it('answers a banned client only after BAN_PAUSE_MS, so that ignoring Retry-After gains it nothing', async () => {
    const paused = await startTestApp({ BAN_THRESHOLD: '0', BAN_PAUSE_MS: '300', ADMIN_API_KEY: t.adminKey }, { db: t.db });
    try {
      const { key } = await createApiKey(paused, { plan: 'ENTERPRISE', requestsPerMinute: 1, requestsPerDay: 1 });
      const send = () => request(paused.url).post('/graphql').set('X-API-Key', key).send({ query: QUERY });
      expect((await send()).status).toBe(200);
      expect((await send()).status).toBe(403); // the first refusal starts the ban: threshold 0
      const started = performance.now();
      const during = await send();
      expect(during.status).toBe(403);
      expect(during.body.errors[0].extensions.code).toBe('API_KEY_BANNED');
      expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    } finally {
      await paused.close();
    }
  });

  it('bans an anonymous client with CLIENT_BANNED', async () => {
    const client = { 'X-Forwarded-For': '198.51.100.7' };
    const app = await startTestApp({ TRUST_PROXY: 'true', BAN_THRESHOLD: '2', BAN_SECONDS: '30', ADMIN_API_KEY: t.adminKey }, { db: t.db });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 64; i += 1) statuses.push((await request(app.url).get('/openapi.json').set(client)).status);
      expect(statuses).toEqual([...Array(60).fill(200), 429, 429, 403, 403]);
      const banned = await request(app.url).get('/openapi.json').set(client);
      expect(banned.body).toMatchObject({ code: 'CLIENT_BANNED', status: 403 });
      expect(Number(banned.headers['retry-after'])).toBeLessThanOrEqual(30);
      expect((await request(app.url).get('/openapi.json').set('X-Forwarded-For', '198.51.100.8')).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("still serves a banned or limited browser the explorer's page at /graphql, counting it against no quota", async () => {
    const client = { 'X-Forwarded-For': '198.51.100.9' };
    const app = await startTestApp({ TRUST_PROXY: 'true', BAN_THRESHOLD: '0', ADMIN_API_KEY: t.adminKey }, { db: t.db });
    try {
      const { key } = await createApiKey(app, { plan: 'ENTERPRISE', requestsPerMinute: 1, requestsPerDay: 1 });
      const page = (headers: Record<string, string>) => request(app.url).get('/graphql').set('Accept', 'text/html').set(headers);
      // Pages first: none of them spends the one request of the key's minute.
      expect((await page({ 'X-API-Key': key })).status).toBe(200);
      const query = () => request(app.url).post('/graphql').set('X-API-Key', key).send({ query: `query Count ${QUERY}` });
      expect((await query()).status).toBe(200);
      // The first refusal starts the ban: threshold 0.
      expect((await query()).body.errors[0].extensions.code).toBe('API_KEY_BANNED');
      for (let i = 0; i < 60; i += 1) await request(app.url).get('/openapi.json').set(client);
      expect((await request(app.url).get('/openapi.json').set(client)).body.code).toBe('CLIENT_BANNED');
      for (const headers of [{ 'X-API-Key': key }, client]) {
        const answer = await page(headers);
        expect([answer.status, answer.headers['content-type'], answer.headers['x-ratelimit-limit']]).toEqual([200, 'text/html; charset=utf-8', undefined]);
        expect(answer.text).toMatch(/Apollo Sandbox/);
      }
      // Its own surface in the metrics, not the GraphQL API's.
      const metrics = (await request(app.url).get('/metrics')).text;
      expect(metrics).toMatch(/petstore_http_requests_total\{surface="explorer",operation="landing",status="200"\} 3/);
      expect(metrics).not.toMatch(/surface="graphql",operation="anonymous",status="200"/);
    } finally {
      await app.close();
    }
  });

  it('behind a trusted proxy, counts an X-Forwarded-For that is not an IP address against the socket address', async () => {
    const app = await startTestApp({ TRUST_PROXY: 'true', ADMIN_API_KEY: t.adminKey }, { db: t.db });
    try {
      const remaining = async (forwarded: string) =>
        Number((await request(app.url).get('/openapi.json').set('X-Forwarded-For', forwarded)).headers['x-ratelimit-remaining']);
      // Each of these would otherwise be a fresh identity with 59 remaining.
      expect(await remaining('garbage')).toBe(59);
      expect(await remaining('1.1.1.1:1234')).toBe(58);
      expect(await remaining('A'.repeat(5_000))).toBe(57);
      expect(await remaining(' 203.0.113.9 , 10.0.0.1:80')).toBe(56);
      // A valid address is its own client, surrounding spaces or not.
      expect(await remaining(' 203.0.113.9 ')).toBe(59);
      expect(await remaining('10.0.0.2, 203.0.113.9')).toBe(58);
    } finally {
      await app.close();
    }
  });

  it.each([
    ['the proxy this client connects from', '127.0.0.1', true],
    ['a range holding it', '127.0.0.0/8, ::1', true],
    ['other proxies only', '10.0.0.5, 192.168.0.0/16', false],
  ])('with TRUST_PROXY naming %s (%s), believes X-Forwarded-For: %s', async (_label, proxies, believed) => {
    const app = await startTestApp({ TRUST_PROXY: proxies, ADMIN_API_KEY: t.adminKey }, { db: t.db });
    try {
      const remaining = async (forwarded: string) =>
        Number((await request(app.url).get('/openapi.json').set('X-Forwarded-For', forwarded)).headers['x-ratelimit-remaining']);
      // Two addresses: two identities when the header is believed, the socket's one when it is not.
      expect([await remaining('203.0.113.20'), await remaining('203.0.113.21')]).toEqual(believed ? [59, 59] : [59, 58]);
    } finally {
      await app.close();
    }
  });

  it('refuses unbanApiKey to non-admins and for unknown keys', async () => {
    const client = await freeKey();
    expect(codes(await gql(t.url, 'mutation { unbanApiKey(id: "1") { id } }', undefined, { key: client }))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(t.url, 'mutation { unbanApiKey(id: "999999") { id } }', undefined, { key: t.adminKey }))).toEqual(['NOT_FOUND']);
  });
});

describe('field limits', () => {
  it('admits 10 placeOrder calls a minute per key, refusing more with a field error RATE_LIMITED', async () => {
    const key = (await createApiKey(t, { plan: 'PRO' })).key;
    const petId = await stockedPet(t, 1000);
    const results = await Promise.all(Array.from({ length: 30 }, () => placeOrder(t, key, petId, 1)));
    const placed = results.filter((result) => result.data?.placeOrder);
    const limited = results.filter((result) => codes(result)[0] === 'RATE_LIMITED');
    expect(placed).toHaveLength(10);
    expect(limited).toHaveLength(20);
    expect(limited[0].status).toBe(200);
    expect(limited[0].errors?.[0]).toMatchObject({ path: ['placeOrder'], extensions: { code: 'RATE_LIMITED', status: 429 } });
    const stock = await gql(t.url, `{ inventoryItem(petId: "${petId}") { quantity } }`);
    expect(stock.data?.inventoryItem.quantity).toBe(990);
    // Another key has its own allowance.
    expect((await placeOrder(t, await freeKey(), petId, 1)).data?.placeOrder).toBeTruthy();
  });

  it('admits 20 createApiKey calls a minute per admin key', async () => {
    const { key: admin } = await createApiKey(t, { plan: 'BUSINESS', role: 'ADMIN' });
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => gql(t.url, `mutation { createApiKey(input: { name: "k${i}", plan: FREE }) { key } }`, undefined, { key: admin })),
    );
    expect(results.filter((result) => result.data?.createApiKey)).toHaveLength(20);
    expect(results.filter((result) => codes(result)[0] === 'RATE_LIMITED')).toHaveLength(5);
  });
});
