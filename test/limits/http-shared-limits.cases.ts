import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { BURST_QUERY, burst, tally } from '../helpers/burst';
import { createApiKey, placeOrder, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { redisServer, type RedisServer } from '../helpers/redis-server';
import { eachStore, withOwnRedis, withRedis } from '../helpers/services';
import { waitFor } from '../helpers/wait';
import { printFigure } from '../helpers/figures';

/** The memory store always; the Redis store when this run has one (shown as skipped otherwise). */
const stores = eachStore<Record<string, string>>([
  ['memory', { REDIS_URL: '' }],
  ['redis', { REDIS_URL: process.env.REDIS_URL ?? '' }],
]);

for (const [store, env, suite] of stores) suite(`150 concurrent requests on one FREE key (${store} store)`, () => {
  let t: TestApp;
  beforeAll(async () => {
    // A burst of 150 tests the windows alone: no client within the in-flight bound could send it.
    t = await startTestApp(env, { limitInFlight: false });
  });
  afterAll(() => t.close());

  it('accepts exactly 60', async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const result = tally(await burst([t.url], key, 150));
    printFigure(`${store} store, 150 concurrent on FREE: ${result.accepted} accepted, ${result.refused} refused`);
    expect(result).toEqual({ accepted: 60, refused: 90, other: 0 });
  });
});

withRedis('two instances sharing one Redis', () => {
  let db: TestDatabase;
  let apps: TestApp[];
  beforeAll(async () => {
    db = await createTestDatabase();
    const limiterKeyPrefix = `shared-${randomBytes(4).toString('hex')}`;
    const first = await startTestApp({}, { db, limiterKeyPrefix, limitInFlight: false });
    const second = await startTestApp({ ADMIN_API_KEY: first.adminKey }, { db, limiterKeyPrefix, limitInFlight: false });
    apps = [first, second];
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await db.close();
  });

  it('accept 60 requests of a FREE key in total, as one service', async () => {
    const { key } = await createApiKey(apps[0], { plan: 'FREE' });
    const result = tally(await burst(apps.map((app) => app.url), key, 150));
    printFigure(`two instances on one Redis, 150 concurrent on FREE: ${result.accepted} accepted`);
    expect(result).toEqual({ accepted: 60, refused: 90, other: 0 });
  });

  it('place exactly 10 orders of 40 concurrent placeOrder calls of one key (field limit 10 a minute)', async () => {
    const petId = await stockedPet(apps[0], 1_000);
    const { key } = await createApiKey(apps[0], { plan: 'PRO' });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => placeOrder(apps[i % 2], key, petId)));
    const placed = results.filter((result) => result.data?.placeOrder).length;
    const limited = results.filter((result) => result.errors?.[0].extensions.code === 'RATE_LIMITED').length;
    printFigure(`two instances on one Redis, 40 concurrent placeOrder: ${placed} placed, ${limited} limited`);
    expect({ placed, limited }).toEqual({ placed: 10, limited: 30 });
  });

  it('create exactly 20 keys of 40 concurrent createApiKey calls of one key (field limit 20 a minute)', async () => {
    const { key } = await createApiKey(apps[0], { plan: 'BUSINESS', role: 'ADMIN' });
    const create = 'mutation { createApiKey(input: { name: "burst", plan: FREE }) { key } }';
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => gql(apps[i % 2].url, create, undefined, { key })));
    const created = results.filter((result) => result.data?.createApiKey).length;
    printFigure(`two instances on one Redis, 40 concurrent createApiKey: ${created} created`);
    expect(created).toBe(20);
  });

  it('honour a ban made on the other instance', async () => {
    const { key } = await createApiKey(apps[0], { plan: 'FREE' });
    for (let i = 0; i < 71; i += 1) await request(apps[0].url).post('/graphql').set('X-API-Key', key).send(BURST_QUERY);
    const elsewhere = await request(apps[1].url).post('/graphql').set('X-API-Key', key).send(BURST_QUERY);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.errors[0].extensions.code).toBe('API_KEY_BANNED');
  });
});

withOwnRedis('when Redis dies mid-run', () => {
  let redis: RedisServer;
  let db: TestDatabase;
  let apps: TestApp[];
  beforeAll(async () => {
    redis = await redisServer();
    await redis.start();
    db = await createTestDatabase();
    const limiterKeyPrefix = `outage-${randomBytes(4).toString('hex')}`;
    const first = await startTestApp({ REDIS_URL: redis.url }, { db, limiterKeyPrefix, limitInFlight: false });
    const second = await startTestApp({ REDIS_URL: redis.url, ADMIN_API_KEY: first.adminKey }, { db, limiterKeyPrefix, limitInFlight: false });
    apps = [first, second];
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await db.close();
    await redis.kill();
  });

  const readiness = async (app: TestApp) => (await request(app.url).get('/readyz')).body.redis;

  it('keeps serving with per-instance limits, says so in /readyz, and shares again when Redis returns', async () => {
    const { key } = await createApiKey(apps[0], { plan: 'FREE' });
    expect(await readiness(apps[0])).toBe('ok');
    const before = tally(await burst([apps[0].url], key, 20));
    expect(before.accepted).toBe(20);

    await waitFor(() => apps.every((app) => app.app.instances() === 2), 10_000, 'each instance to see the other');
    await redis.kill();
    const started = Date.now();
    const during = await burst(apps.map((app) => app.url), key, 150);
    const elapsed = Date.now() - started;
    // No request fails: each instance limits from its own memory, admitting its share of what Redis
    // had not admitted: the first saw Redis count 20 of 60, so (60 − 20) ÷ 2; the second never saw
    // this key in Redis, so 60 ÷ 2.
    expect(tally(during)).toEqual({ accepted: 20 + 30, refused: 100, other: 0 });
    const ready = await request(apps[0].url).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.redis).toBe('degraded');
    printFigure(`Redis down: 150 requests over two instances in ${elapsed} ms, ${tally(during).accepted} accepted (20 + 30 after 20 in Redis)`);

    await redis.start();
    await waitFor(async () => (await readiness(apps[0])) === 'ok' && (await readiness(apps[1])) === 'ok', 10_000, 'both instances to use Redis again')
    const { key: fresh } = await createApiKey(apps[0], { plan: 'FREE' });
    expect(tally(await burst(apps.map((app) => app.url), fresh, 150)).accepted).toBe(60);
  });
});
