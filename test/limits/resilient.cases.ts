import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLimiterStore, type LimiterStores } from '../../src/limits/create-store';
import { createFieldLimiter } from '../../src/limits/field-limiter';
import { type Decision, RateLimiter } from '../../src/limits/limiter';
import type { BanPolicy } from '../../src/limits/limiter-store';
import { LastRedisWindows } from '../../src/limits/last-redis-windows';
import { RedisLimiterStore } from '../../src/limits/redis.store';
import { windowsFor } from '../../src/limits/window';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { describeWhen } from '../helpers/services';
import { waitFor } from '../helpers/wait';
import { type RedisServer, redisServer, redisServerInstalled } from '../helpers/redis-server';
import { printFigure } from '../helpers/figures';

/**
 * The limiter against a redis-server of its own, which the tests kill, restart and freeze.
 * Another client plays a second gateway instance, to see what is shared through Redis.
 */
const QUOTA = { perMinute: 5, perDay: 100 };
const BAN = { threshold: 100, durationMs: 900_000 };
/** Redis tried again every 50 ms while it fails, not every second: the tests wait for its return. */
const PROBE_EVERY_MS = 50;

const eventually = (condition: () => boolean | Promise<boolean>) => waitFor(condition, 10_000, 'the condition');

/** What another instance sees of `identity` in Redis. */
async function sharedRemaining(url: string, prefix: string, identity: string): Promise<number> {
  const other = new Redis(url);
  try {
    const [minute] = await new RedisLimiterStore(other, prefix).peek(identity, windowsFor(QUOTA), Date.now());
    return minute.remaining;
  } finally {
    other.disconnect();
  }
}

const withOwnRedis = describeWhen(!redisServerInstalled() && 'redis-server (apt-get install redis-server)');

interface Rig {
  prefix: string;
  server: RedisServer;
  stores: LimiterStores;
  limiter: RateLimiter;
  log: CapturedLog;
}

/** A redis-server of the test's own, and a limiter on it that logs where the test can read. */
async function rig(ban: BanPolicy): Promise<Rig> {
  const deployment = `rl-test-${randomBytes(4).toString('hex')}`;
  const server = await redisServer();
  await server.start();
  const log = captureLog();
  const stores = await createLimiterStore({ redis: { kind: 'single', url: server.url }, logger: log.logger, prefix: deployment, probeEveryMs: PROBE_EVERY_MS });
  // The request limiter's own keys, as createLimiterStore lays them out.
  const prefix = `${deployment}:rl`;
  return { prefix, server, stores, limiter: new RateLimiter(stores.store, ban), log };
}

async function unrig({ server, stores }: Rig): Promise<void> {
  server.resume();
  await stores.close();
  await server.kill();
}

withOwnRedis('the limiter store when Redis dies and comes back', () => {
  let prefix: string;
  let server: RedisServer;
  let stores: LimiterStores;
  let limiter: RateLimiter;
  let log: CapturedLog;
  let current: Rig;
  let madeInMemory: Decision;

  beforeAll(async () => {
    current = await rig(BAN);
    ({ prefix, server, stores, limiter, log } = current);
  });
  afterAll(() => unrig(current));

  it('shares limits through Redis while it answers', async () => {
    expect(stores.backend).toBe('redis');
    expect(stores.store.status()).toBe('ok');
    for (let i = 0; i < 3; i++) expect((await limiter.check('key:shared', QUOTA)).kind).toBe('allowed');
    expect(await sharedRemaining(server.url, prefix, 'key:shared')).toBe(2);
  });

  it('gives a refund back in Redis while it answers', async () => {
    await limiter.check('key:refund', QUOTA);
    const counted = await limiter.check('key:refund', QUOTA);
    expect(await sharedRemaining(server.url, prefix, 'key:refund')).toBe(3);
    expect((await limiter.refund('key:refund', counted)).reported.remaining).toBe(4);
    expect(await sharedRemaining(server.url, prefix, 'key:refund')).toBe(4);
  });

  it('answers every request from memory once Redis is killed', async () => {
    await server.kill();
    const results: Decision[] = [];
    for (let i = 0; i < 8; i++) results.push(await limiter.check('key:outage', QUOTA));
    // Per-instance limits: this instance's memory admits the quota, then refuses.
    expect(results.map((decision) => decision.kind)).toEqual([
      ...Array<string>(5).fill('allowed'),
      ...Array<string>(3).fill('limited'),
    ]);
    expect(stores.store.status()).toBe('degraded');
    expect(log.messages('warn')).toHaveLength(1);
  });

  it('admits from memory only what Redis had not admitted yet in the window still running', async () => {
    // Redis had counted 3 of this minute's 5 for this identity when it died.
    const results: Decision[] = [];
    for (let i = 0; i < 3; i++) results.push(await limiter.check('key:shared', QUOTA));
    expect(results.map((decision) => decision.kind)).toEqual(['allowed', 'allowed', 'limited']);
    expect(results[0].reported).toMatchObject({ limit: 2, remaining: 1 });
  });

  it('gives a refund back in memory during the outage', async () => {
    const counted = await limiter.check('key:outage-refund', QUOTA);
    expect(counted.reported.remaining).toBe(4);
    expect((await limiter.refund('key:outage-refund', counted)).reported.remaining).toBe(5);
    madeInMemory = await limiter.check('key:outage-refund', QUOTA);
  });

  it('keeps field limits working from memory during the outage', async () => {
    const fields = createFieldLimiter(stores.fieldStore);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await fields.limit('key:outage', 'placeOrder', { max: 2, windowMs: 60_000 }));
    expect(answers.map((a) => a === undefined)).toEqual([true, true, false]);
  });

  it('goes back to shared limits, with one log line, when Redis returns', async () => {
    await server.start();
    await eventually(() => stores.store.status() === 'ok');
    expect(log.messages('info')).toHaveLength(1);
    expect(log.messages('warn')).toHaveLength(1);
    for (let i = 0; i < 4; i++) expect((await limiter.check('key:after', QUOTA)).kind).toBe('allowed');
    expect(await sharedRemaining(server.url, prefix, 'key:after')).toBe(1);
  });

  it('gives Redis nothing back for a count made in memory during the outage: its window is another', async () => {
    // The restarted redis-server kept nothing: this count starts the identity's window there anew.
    expect((await limiter.check('key:outage-refund', QUOTA)).reported.remaining).toBe(4);
    expect((await limiter.refund('key:outage-refund', madeInMemory)).reported.remaining).toBe(4);
    expect(await sharedRemaining(server.url, prefix, 'key:outage-refund')).toBe(4);
  });
});

withOwnRedis('the limiter store when Redis hangs', () => {
  let prefix: string;
  let server: RedisServer;
  let stores: LimiterStores;
  let limiter: RateLimiter;
  let log: CapturedLog;
  let current: Rig;

  beforeAll(async () => {
    current = await rig({ threshold: 0, durationMs: 900_000 });
    ({ prefix, server, stores, limiter, log } = current);
  });
  afterAll(() => unrig(current));

  // Redis stays frozen until the next test resumes it: every answer here came without it.
  it('answers while Redis does not answer at all', async () => {
    await limiter.check('key:banned', { perMinute: 1, perDay: 100 });
    expect((await limiter.check('key:banned', { perMinute: 1, perDay: 100 })).kind).toBe('banned');
    server.pause();
    for (let i = 0; i < 5; i++) expect((await limiter.check('key:hung', QUOTA)).kind).toBe('allowed');
    expect(stores.store.status()).toBe('degraded');
    expect(log.messages('warn')).toHaveLength(1);
  });

  it('applies an unban made during the outage once Redis answers again', async () => {
    await limiter.unban('key:banned'); // answered with Redis still frozen
    // Still banned in Redis: the unban waits there until Redis answers.
    server.resume();
    await eventually(() => stores.store.status() === 'ok');
    const other = new Redis(server.url);
    try {
      const shared = new RedisLimiterStore(other, prefix);
      await eventually(async () => (await shared.bannedUntil('key:banned', Date.now())) === null);
    } finally {
      other.disconnect();
    }
    expect(await limiter.bannedUntil('key:banned')).toBeNull();
  });

  it('carries a ban made during the outage into Redis when it answers again', async () => {
    const quota = { perMinute: 1, perDay: 100 };
    server.pause();
    await eventually(async () => {
      await limiter.check('key:probe', quota);
      return stores.store.status() === 'degraded';
    });
    expect((await limiter.check('key:outage-ban', quota)).kind).toBe('allowed');
    expect((await limiter.check('key:outage-ban', quota)).kind).toBe('banned');
    server.resume();
    await eventually(() => stores.store.status() === 'ok');
    const other = new Redis(server.url);
    try {
      // What another instance, which never saw the outage's requests, now sees.
      const shared = new RedisLimiterStore(other, prefix);
      await eventually(async () => (await shared.bannedUntil('key:outage-ban', Date.now())) !== null);
      expect((await shared.bannedUntil('key:outage-ban', Date.now()))! - Date.now()).toBeGreaterThan(890_000);
    } finally {
      other.disconnect();
    }
    expect((await limiter.check('key:outage-ban', quota)).kind).toBe('banned');
  });
});

withOwnRedis('two instances limiting from memory while Redis is too slow to answer', () => {
  const shared = { perMinute: 10, perDay: 100 };
  let server: RedisServer;
  let instances: LimiterStores[];

  beforeAll(async () => {
    server = await redisServer();
    await server.start();
    const deployment = `rl-test-${randomBytes(4).toString('hex')}`;
    const open = () =>
      createLimiterStore({ redis: { kind: 'single', url: server.url }, logger: captureLog().logger, prefix: deployment, heartbeatEveryMs: 50, probeEveryMs: PROBE_EVERY_MS });
    instances = [await open(), await open()];
  });
  afterAll(async () => {
    server.resume();
    await Promise.all(instances.map((stores) => stores.close()));
    await server.kill();
  });

  it('admit at most the quota between them: each its share, the quota ÷ the instances it last saw', async () => {
    await eventually(() => instances.every((stores) => stores.instances() === 2));
    // Frozen, Redis holds every connection open and answers nothing within the deadline.
    server.pause();
    const limiters = instances.map((stores) => new RateLimiter(stores.store, BAN));
    const admitted = [0, 0];
    for (let round = 0; round < shared.perMinute; round++) {
      for (const [i, limiter] of limiters.entries()) {
        if ((await limiter.check('key:crowded', shared)).kind === 'allowed') admitted[i]++;
      }
    }
    expect(instances.map((stores) => stores.store.status())).toEqual(['degraded', 'degraded']);
    expect(instances.map((stores) => stores.instances())).toEqual([2, 2]);
    printFigure(`two instances in fallback, quota ${shared.perMinute} a minute, ${2 * shared.perMinute} requests: admitted ${admitted.join(' + ')}`);
    expect(admitted).toEqual([shared.perMinute / 2, shared.perMinute / 2]);
  });

  it('admit together, from memory, only the share of what Redis had not admitted yet in the window', async () => {
    server.resume();
    await eventually(() => instances.every((stores) => stores.store.status() === 'ok' && stores.instances() === 2));
    let now = Date.now();
    const limiters = instances.map((stores) => new RateLimiter(stores.store, BAN, () => now));
    const admittedBy = async (limiter: RateLimiter) => ((await limiter.check('key:half-counted', shared)).kind === 'allowed' ? 1 : 0);
    const requests = async (rounds: number) => {
      const admitted = [0, 0];
      for (let round = 0; round < rounds; round++) {
        for (const [i, limiter] of limiters.entries()) admitted[i] += await admittedBy(limiter);
      }
      return admitted;
    };

    // Four requests in turn while Redis answers: the first instance last saw 3 counted, the second 4.
    const fromRedis = await requests(2);
    expect(fromRedis).toEqual([2, 2]);
    server.pause();
    const fromMemory = await requests(shared.perMinute);
    expect(instances.map((stores) => stores.store.status())).toEqual(['degraded', 'degraded']);
    const total = [...fromRedis, ...fromMemory].reduce((sum, n) => sum + n, 0);
    printFigure(
      `two instances, quota ${shared.perMinute} a minute: Redis admitted ${fromRedis.join(' + ')}, then frozen, memory admitted ${fromMemory.join(' + ')}: ${total} in all`,
    );
    // floor((10 − 3) ÷ 2) and floor((10 − 4) ÷ 2): the quota exactly, not 4 + 5 + 5.
    expect(fromMemory).toEqual([3, 3]);
    expect(total).toBe(shared.perMinute);

    // Once the minute Redis counted in has passed, each instance has its whole share again.
    now += 60_000;
    expect(await requests(shared.perMinute)).toEqual([shared.perMinute / 2, shared.perMinute / 2]);
  });
});

describe('the Redis windows a resilient store remembers for its fallback', () => {
  const minute = (count: number, resetAt: number) => ({ name: 'minute' as const, limit: 10, lengthMs: 60_000, remaining: 10 - count, resetAt });

  it('holds the count of the last answer while its window runs, and nothing after', () => {
    const seen = new LastRedisWindows();
    seen.remember('key:a', [minute(4, 60_000)]);
    seen.remember('key:a', [minute(3, 60_000)]); // a refund: the last answer stands
    expect(seen.counted('key:a', 'minute', 59_999)).toBe(3);
    expect(seen.counted('key:a', 'minute', 60_000)).toBe(0);
    expect(seen.counted('key:a', 'day', 0)).toBe(0);
    expect(seen.counted('key:b', 'minute', 0)).toBe(0);
  });

  it('forgets the identity Redis answered least recently past its bound', () => {
    const seen = new LastRedisWindows(2);
    seen.remember('key:a', [minute(1, 60_000)]);
    seen.remember('key:b', [minute(2, 60_000)]);
    seen.remember('key:a', [minute(5, 60_000)]);
    seen.remember('key:c', [minute(3, 60_000)]);
    expect(seen.size).toBe(2);
    expect(['key:a', 'key:b', 'key:c'].map((identity) => seen.counted(identity, 'minute', 0))).toEqual([5, 0, 3]);
  });
});
