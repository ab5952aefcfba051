import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { SLOT_LEASE_MS } from '../../src/live/subscription-slots';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { type Feed, liveSession, subscribed } from '../helpers/live';
import { type RedisServer, redisServer } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';
import { withOwnRedis } from '../helpers/services';

/**
 * Caps stay exact through a Redis that loses its data (docs/contract.md §9 "Details"): the
 * instance writes its live slots back within one lease, and while Redis is away its memory
 * fallback counts them. On a Redis of its own, so that FLUSHALL and a kill touch no one else.
 */

withOwnRedis('subscription slots when Redis loses its data', () => {
  let redis: RedisServer;
  let admin: Redis;
  let t: TestApp;
  const live = liveSession();
  beforeAll(async () => {
    redis = await redisServer();
    await redis.start();
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    t = await startTestApp({ REDIS_URL: redis.url }, { limiterKeyPrefix: `loss-${randomBytes(4).toString('hex')}`, limitInFlight: false });
  });
  afterEach(() => live.closeAll());
  afterAll(async () => {
    await t.close();
    admin.disconnect();
    await redis.kill();
  });

  const PETS = 'subscription { petChanged { id } }';
  /** Slots held in Redis itself, whatever the instance would count. */
  const slotsInRedis = async () =>
    Number(await admin.eval("local n = 0 for _, k in ipairs(redis.call('KEYS', '*:sub:*')) do n = n + redis.call('ZCARD', k) end return n", 0));
  const errorCode = (feed: Feed) => feed.error?.[0]?.extensions?.code;

  /** A FREE key (cap 5) with 5 live subscriptions on one socket. */
  async function fullKey() {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const identity = `key:${(await t.app.services.apiKeys.authenticate(key))?.id}`;
    const socket = live.client(t, key);
    for (let i = 0; i < 5; i++) live.watch(socket, PETS);
    await subscribed(t, 5);
    const active = () => t.app.services.live.slots.active(identity);
    expect(await active()).toBe(5);
    return { socket, active };
  }

  it('re-asserts the live slots within one lease after FLUSHALL, and the cap is exact again', async () => {
    const { socket, active } = await fullKey();
    await admin.flushall();
    expect(await active()).toBe(0);
    await waitFor(async () => (await slotsInRedis()) === 5, SLOT_LEASE_MS, 'the 5 live slots back in Redis');
    expect(await active()).toBe(5);
    const sixth = live.watch(socket, PETS);
    await sixth.until(1);
    expect(errorCode(sixth)).toBe('TOO_MANY_SUBSCRIPTIONS');
  }, SLOT_LEASE_MS + 10_000);

  it('counts its own live slots while Redis is down, and writes them back when it returns empty', async () => {
    const { socket, active } = await fullKey();
    await redis.kill();
    expect(await active()).toBe(5);
    const during = live.watch(socket, PETS);
    await during.until(1);
    expect(errorCode(during)).toBe('TOO_MANY_SUBSCRIPTIONS');

    await redis.start();
    await waitFor(async () => (await slotsInRedis().catch(() => -1)) === 5, SLOT_LEASE_MS, 'the 5 live slots back in Redis');
    const after = live.watch(socket, PETS);
    await after.until(1);
    expect(errorCode(after)).toBe('TOO_MANY_SUBSCRIPTIONS');
  }, SLOT_LEASE_MS + 20_000);
});
