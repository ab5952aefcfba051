import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { burst, tally } from '../helpers/burst';
import { createApiKey, placeOrder, stockedPet } from '../helpers/builders';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { redisCluster, type RedisCluster, redisSentinel, type RedisSentinel } from '../helpers/redis-cluster';
import { redisServer, type RedisServer } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';
import { withOwnRedis } from '../helpers/services';
import { printFigure } from '../helpers/figures';

/**
 * The limiter on the Redis topologies of docs/contract.md §2, each started by the test on
 * loopback ports: a Redis Cluster of 3 masters with a replica each, a master and replica behind
 * Sentinel, and two deployments with different key prefixes on one Redis.
 */

const readiness = async (app: TestApp) => (await request(app.url).get('/readyz')).body.redis as string;

/** Waits until every instance uses Redis again; how long that took, for the log. */
async function allReady(apps: TestApp[], withinMs: number): Promise<number> {
  const started = Date.now();
  await waitFor(async () => (await Promise.all(apps.map(readiness))).every((state) => state === 'ok'), withinMs, 'every instance to use Redis again');
  return Date.now() - started;
}

/**
 * Two instances of one deployment on `env`'s Redis, sharing a database and a key prefix. The
 * bound on requests in flight is off: the bursts test the shared windows alone.
 */
async function twoInstances(db: TestDatabase, env: Record<string, string>): Promise<TestApp[]> {
  const limiterKeyPrefix = `topology-${randomBytes(4).toString('hex')}`;
  const options = { db, limiterKeyPrefix, limitInFlight: false };
  const first = await startTestApp({ REDIS_URL: '', ...env }, options);
  const second = await startTestApp({ REDIS_URL: '', ...env, ADMIN_API_KEY: first.adminKey }, options);
  return [first, second];
}

// Services mode, where CI runs the Redis tests; the topologies themselves are the test's own.

withOwnRedis('on a Redis Cluster of 3 masters and 3 replicas', () => {
  let cluster: RedisCluster;
  let db: TestDatabase;
  let apps: TestApp[];
  beforeAll(async () => {
    cluster = await redisCluster(3, 1);
    db = await createTestDatabase();
    apps = await twoInstances(db, { REDIS_CLUSTER_NODES: cluster.seeds });
  }, 60_000);
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await db?.close();
    await cluster?.stop();
  });

  it('accepts exactly 60 of 150 concurrent requests of a FREE key over two instances', async () => {
    expect(await readiness(apps[0])).toBe('ok');
    const { key } = await createApiKey(apps[0], { plan: 'FREE' });
    const result = tally(await burst(apps.map((app) => app.url), key, 150));
    printFigure(`cluster, two instances, 150 concurrent on FREE: ${result.accepted} accepted, ${result.refused} refused`);
    expect(result).toEqual({ accepted: 60, refused: 90, other: 0 });
  });

  it('places exactly 10 of 40 concurrent placeOrder calls of one key (field limit, lock in the same slot)', async () => {
    const petId = await stockedPet(apps[0], 1_000);
    const { key } = await createApiKey(apps[0], { plan: 'PRO' });
    await allReady(apps, 20_000); // shared, not per-instance, limits are under test
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => placeOrder(apps[i % 2], key, petId)));
    expect(results.filter((result) => result.data?.placeOrder).length).toBe(10);
  });

  it('falls back to per-instance limits when a master dies, and shares again after failover', async () => {
    const { key, id } = await createApiKey(apps[0], { plan: 'FREE' });
    expect(tally(await burst([apps[0].url], key, 20)).accepted).toBe(20);

    // The master holding this key's windows (its hash tag decides the slot).
    const master = await cluster.masterOf(`{key:${id}}`);
    await waitFor(() => apps.every((app) => app.app.instances() === 2), 10_000, 'each instance to see the other');
    await master.kill();
    const killed = Date.now();
    const during = tally(await burst(apps.map((app) => app.url), key, 150));
    printFigure(`cluster, master killed: 150 concurrent over two instances: ${during.accepted} accepted, ${during.refused} refused, ${during.other} other`);
    // No request fails; each instance limits from its own memory, admitting its share of the quota.
    expect(during.other).toBe(0);
    expect(during.accepted).toBeGreaterThan(0);
    expect(during.accepted).toBeLessThanOrEqual(60);
    expect((await request(apps[0].url).get('/readyz')).status).toBe(200);

    // A replica takes the dead master's slots once the others notice (node timeout 1 s).
    await waitFor(async () => (await cluster.masterOf(`{key:${id}}`)) !== master, 20_000, 'a replica to take over')
    await cluster.healthy(20_000);
    const recovered = await allReady(apps, 20_000);
    printFigure(`cluster failover: replica promoted and both instances shared again ${Date.now() - killed} ms after the kill (${recovered} ms after the cluster was whole)`);
    const { key: fresh } = await createApiKey(apps[0], { plan: 'FREE' });
    expect(tally(await burst(apps.map((app) => app.url), fresh, 150))).toEqual({ accepted: 60, refused: 90, other: 0 });
  }, 45_000);
});

withOwnRedis('behind Sentinel (one master, one replica)', () => {
  let sentinel: RedisSentinel;
  let db: TestDatabase;
  let apps: TestApp[];
  beforeAll(async () => {
    sentinel = await redisSentinel();
    db = await createTestDatabase();
    apps = await twoInstances(db, { REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_NAME: sentinel.name });
  }, 30_000);
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await db?.close();
    await sentinel?.stop();
  });

  it('accepts exactly 60 of 150 concurrent requests, and again on the promoted replica after the master dies', async () => {
    expect(await readiness(apps[0])).toBe('ok');
    const { key } = await createApiKey(apps[0], { plan: 'FREE' });
    expect(tally(await burst(apps.map((app) => app.url), key, 150))).toEqual({ accepted: 60, refused: 90, other: 0 });

    await sentinel.master.kill();
    const killed = Date.now();
    // Serving goes on throughout, from memory until the sentinel promotes the replica.
    expect(tally(await burst(apps.map((app) => app.url), key, 20)).other).toBe(0);
    await sentinel.failedOver();
    await allReady(apps, 20_000);
    const { key: fresh } = await createApiKey(apps[0], { plan: 'FREE' });
    const after = tally(await burst(apps.map((app) => app.url), fresh, 150));
    printFigure(`sentinel: shared again ${Date.now() - killed} ms after the master died; then ${after.accepted} of 150 accepted`);
    expect(after).toEqual({ accepted: 60, refused: 90, other: 0 });
  }, 45_000);
});

withOwnRedis('two deployments with different REDIS_KEY_PREFIX on one Redis', () => {
  let redis: RedisServer;
  let db: TestDatabase;
  let shop: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    redis = await redisServer();
    await redis.start();
    db = await createTestDatabase();
    shop = await startTestApp({ REDIS_URL: redis.url }, { db, limiterKeyPrefix: 'shop-eu', limitInFlight: false });
    other = await startTestApp({ REDIS_URL: redis.url, ADMIN_API_KEY: shop.adminKey }, { db, limiterKeyPrefix: 'shop-us', limitInFlight: false });
  });
  afterAll(async () => {
    await shop.close();
    await other.close();
    await db.close();
    await redis.kill();
  });

  it('count apart, and every key each writes carries its prefix', async () => {
    const { key } = await createApiKey(shop, { plan: 'FREE' });
    // The same API key on both: each deployment gives it a full quota of its own.
    expect(tally(await burst([shop.url], key, 70)).accepted).toBe(60);
    expect(tally(await burst([other.url], key, 70)).accepted).toBe(60);
    const petId = await stockedPet(shop, 100);
    const { key: orders } = await createApiKey(shop, { plan: 'PRO' });
    expect((await placeOrder(shop, orders, petId)).data?.placeOrder).toBeTruthy();
    expect((await placeOrder(other, orders, petId)).data?.placeOrder).toBeTruthy();
    await request(other.url).get('/openapi.json');

    const client = new Redis(redis.url);
    try {
      const keys: string[] = [];
      for await (const batch of client.scanStream({ count: 1_000 })) keys.push(...(batch as string[]));
      const shopKeys = keys.filter((name) => name.startsWith('shop-eu:'));
      const otherKeys = keys.filter((name) => name.startsWith('shop-us:'));
      expect(shopKeys.length + otherKeys.length).toBe(keys.length);
      // Request windows, refusals and bans, and field limits: each deployment has its own of each.
      for (const owned of [shopKeys, otherKeys]) {
        expect(owned.some((name) => /^shop-(eu|us):rl:\{key:[^}]+\}:minute$/.test(name))).toBe(true);
        expect(owned.some((name) => /^shop-(eu|us):rl:\{key:[^}]+\}:refusals$/.test(name))).toBe(true);
        expect(owned.some((name) => /^shop-(eu|us):fl:\{key:[^}]+\}:placeOrder$/.test(name))).toBe(true);
      }
      printFigure(`two prefixes on one Redis: ${shopKeys.length} keys under shop-eu:, ${otherKeys.length} under shop-us:, ${keys.length} in all`);
    } finally {
      client.disconnect();
    }
  });
});
