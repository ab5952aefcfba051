import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import type { RedisConnection } from '../../src/limits/redis-client';
import type { CachedAnswer } from '../../src/cache/memory-level';
import { type CacheObserver, type Lookup, ResponseCache } from '../../src/cache/response-cache';
import { testClock, type TestClock } from '../helpers/clock';
import { eachStore } from '../helpers/services';

/**
 * The cache's facade (src/cache/response-cache.ts) on a clock moved by hand: when an answer may
 * be kept and served, on this instance and on another sharing its Redis level.
 */
const MAX_AGE_MS = 60_000;
const petChanged = (id: string) => JSON.stringify({ type: 'pet', kind: 'UPDATED', id });
const stockChanged = (petId: string) => JSON.stringify({ type: 'stock', petId, quantity: 1, status: 'available' });

/** A stand-in for Redis's few commands the cache sends: values, and the tags' sets its two scripts keep. */
function memoryRedis(): RedisConnection {
  const values = new Map<string, string>();
  const sets = new Map<string, Set<string>>();
  const client = {
    async get(key: string) {
      return values.get(key) ?? null;
    },
    async mget(...keys: string[]) {
      return keys.map((key) => values.get(key) ?? null);
    },
    async set(key: string, value: string) {
      values.set(key, value);
      return 'OK';
    },
    // As the store script reads its arguments: how many answers, then each one's JSON, ms and number of tags.
    async responseCacheStore(count: number, ...rest: (string | number)[]) {
      const keys = rest.slice(0, count) as string[];
      const args = rest.slice(count);
      let k = 0;
      for (let i = 0; i < Number(args[0]); i++) {
        const [json, , tags] = args.slice(1 + 3 * i, 4 + 3 * i);
        values.set(keys[k], String(json));
        for (const tag of keys.slice(k + 1, k + 1 + Number(tags))) sets.set(tag, (sets.get(tag) ?? new Set()).add(keys[k]));
        k += 1 + Number(tags);
      }
      return 1;
    },
    async responseCachePurge(count: number, ...keys: string[]) {
      let removed = 0;
      for (const tag of keys.slice(0, count)) {
        for (const answer of sets.get(tag) ?? []) if (values.delete(answer)) removed++;
        sets.delete(tag);
      }
      return removed;
    },
  };
  return client as unknown as RedisConnection;
}

interface Instance {
  cache: ResponseCache;
  lookups: string[];
  redis: { up: boolean };
}

function instance(clock: TestClock, shared?: { client: RedisConnection; prefix: string }): Instance {
  const lookups: string[] = [];
  const redis = { up: true };
  const observer: CacheObserver = { observeLookup: (result, level) => lookups.push(`${result}:${level}`), observePurge: () => undefined };
  const cache = new ResponseCache({
    maxAgeMs: MAX_AGE_MS,
    maxBytes: 1024 * 1024,
    redis: shared && { ...shared, usable: () => redis.up },
    observer,
    now: clock,
  });
  cache.streamJoined();
  return { cache, lookups, redis };
}

const answerOf = (clock: TestClock, tags: string[], body = '{"pet":{"id":"1"}}'): CachedAnswer => ({ body, tags, startedAt: clock() });
const kind = (lookup: Lookup) => (lookup.kind === 'hit' ? `hit:${lookup.level}` : lookup.kind);

describe('on one instance', () => {
  let clock: TestClock;
  let one: Instance;
  beforeEach(() => {
    clock = testClock();
    one = instance(clock);
    clock.advance(1);
  });

  it('serves what it kept, under its key only', async () => {
    one.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
    const found = await one.cache.lookup('a');
    expect(found.kind === 'hit' && found.answer.body).toBe('{"pet":{"id":"1"}}');
    expect(kind(await one.cache.lookup('b'))).toBe('miss');
    expect(one.lookups).toEqual(['hit:memory', 'miss:none']);
  });

  it('does not keep an answer whose read began before a purge of what it read', async () => {
    const racing = answerOf(clock, ['pet:1']);
    const unrelated = answerOf(clock, ['pet:2']);
    clock.advance(5);
    one.cache.changed(petChanged('1'));
    clock.advance(5);
    one.cache.store('racing', racing, MAX_AGE_MS);
    one.cache.store('unrelated', unrelated, MAX_AGE_MS);
    expect(kind(await one.cache.lookup('racing'))).toBe('miss');
    expect(kind(await one.cache.lookup('unrelated'))).toBe('hit:memory');
  });

  it('does not keep an answer whose read began in the same millisecond as a purge', async () => {
    const racing = answerOf(clock, ['stock:1']);
    one.cache.changed(stockChanged('1'));
    one.cache.store('racing', racing, MAX_AGE_MS);
    expect(kind(await one.cache.lookup('racing'))).toBe('miss');
  });

  it('purges the answers a change read: a pet change its stock and lists too, a stock change not the pet', async () => {
    const keys = { pet: ['pet:1'], list: ['pets'], stock: ['stock:1'], stockList: ['stock'], other: ['pet:2', 'stock:2'] };
    for (const [key, tags] of Object.entries(keys)) one.cache.store(key, answerOf(clock, tags), MAX_AGE_MS);
    clock.advance(1);
    one.cache.changed(stockChanged('1'));
    clock.advance(1);
    const left = async () => Object.fromEntries(await Promise.all(Object.keys(keys).map(async (key) => [key, kind(await one.cache.lookup(key))])));
    expect(await left()).toEqual({ pet: 'hit:memory', list: 'hit:memory', stock: 'miss', stockList: 'miss', other: 'hit:memory' });
    one.cache.changed(petChanged('1'));
    expect(await left()).toEqual({ pet: 'miss', list: 'miss', stock: 'miss', stockList: 'miss', other: 'hit:memory' });
  });

  it('ignores a payload that is no change of ours', async () => {
    one.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
    one.cache.changed('{"type":"pet","id":"1"}');
    one.cache.changed('not json');
    expect(kind(await one.cache.lookup('a'))).toBe('hit:memory');
  });

  it('serves no answer past the max-age, nor past the ttl it was kept for', async () => {
    one.cache.store('long', answerOf(clock, ['pet:1']), MAX_AGE_MS * 10);
    one.cache.store('short', answerOf(clock, ['pet:2']), 1_000);
    clock.advance(1_001);
    expect(kind(await one.cache.lookup('short'))).toBe('miss');
    clock.advance(MAX_AGE_MS - 1_001);
    expect(kind(await one.cache.lookup('long'))).toBe('miss');
  });

  it("hides from a writer every answer read before its last write, and from that writer only", async () => {
    one.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
    clock.advance(1);
    await one.cache.wrote('key:1');
    expect(kind(await one.cache.lookup('a', 'key:1'))).toBe('miss');
    expect(kind(await one.cache.lookup('a', 'key:2'))).toBe('hit:memory');
    expect(kind(await one.cache.lookup('a'))).toBe('hit:memory');
    clock.advance(1);
    one.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
    expect(kind(await one.cache.lookup('a', 'key:1'))).toBe('hit:memory');
  });

  it('neither serves nor keeps while the change stream is lost, and refuses everything older once it is back', async () => {
    one.cache.store('before', answerOf(clock, ['pet:1']), MAX_AGE_MS);
    const racing = answerOf(clock, ['pet:2']);
    clock.advance(1);
    one.cache.streamLost();
    expect(kind(await one.cache.lookup('before'))).toBe('bypass');
    one.cache.store('during', answerOf(clock, ['pet:3']), MAX_AGE_MS);
    clock.advance(1);
    one.cache.streamJoined();
    one.cache.store('racing', racing, MAX_AGE_MS);
    expect(kind(await one.cache.lookup('before'))).toBe('miss');
    expect(kind(await one.cache.lookup('during'))).toBe('miss');
    expect(kind(await one.cache.lookup('racing'))).toBe('miss');
    clock.advance(1);
    one.cache.store('after', answerOf(clock, ['pet:1']), MAX_AGE_MS);
    expect(kind(await one.cache.lookup('after'))).toBe('hit:memory');
    expect(one.lookups).toEqual(['bypass:none', 'miss:none', 'miss:none', 'miss:none', 'hit:memory']);
  });
});

// Two instances sharing one Redis level: a stand-in for Redis, and with REDIS_URL the real one too.
const realRedis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 0 }) : undefined;
afterAll(() => realRedis?.quit());

describe.each(eachStore<() => RedisConnection>([['memory stand-in', memoryRedis], ['redis', () => realRedis as RedisConnection]]))('sharing %s', (_name, redisOf, suite) => {
  suite('two instances', () => {
    let clock: TestClock;
    let here: Instance;
    let there: Instance;
    beforeEach(() => {
      clock = testClock();
      const shared = { client: redisOf(), prefix: `test:rc:${randomBytes(6).toString('hex')}` };
      here = instance(clock, shared);
      there = instance(clock, shared);
      clock.advance(1);
    });

    it('serves from Redis what the other instance kept, then from its own memory', async () => {
      there.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
      await there.cache.settled();
      expect(kind(await here.cache.lookup('a'))).toBe('hit:redis');
      expect(kind(await here.cache.lookup('a'))).toBe('hit:memory');
    });

    it('does not serve an answer from Redis whose read began before a purge this instance heard', async () => {
      const stale = answerOf(clock, ['pet:1']);
      const fresh = answerOf(clock, ['pet:2']);
      clock.advance(1);
      // Heard here only: the other instance, not yet told, stores what it read before the change.
      here.cache.changed(petChanged('1'));
      clock.advance(1);
      there.cache.store('stale', stale, MAX_AGE_MS);
      there.cache.store('fresh', fresh, MAX_AGE_MS);
      await there.cache.settled();
      expect(kind(await here.cache.lookup('stale'))).toBe('miss');
      expect(kind(await here.cache.lookup('fresh'))).toBe('hit:redis');
    });

    it('purges Redis too: the other instance no longer finds what a change read', async () => {
      here.cache.store('a', answerOf(clock, ['stock:1']), MAX_AGE_MS);
      here.cache.store('b', answerOf(clock, ['stock:2']), MAX_AGE_MS);
      await here.cache.settled();
      clock.advance(1);
      here.cache.changed(stockChanged('1'));
      expect(kind(await there.cache.lookup('a'))).toBe('miss');
      expect(kind(await there.cache.lookup('b'))).toBe('hit:redis');
    });

    it('does not put in Redis an answer whose tags were purged before it was sent', async () => {
      here.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
      clock.advance(1);
      here.cache.changed(petChanged('1'));
      await here.cache.settled();
      // The other instance has not heard the change: only Redis could tell it the answer is stale.
      expect(kind(await there.cache.lookup('a'))).toBe('miss');
    });

    it("tells the other instance of a writer's last write", async () => {
      there.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
      clock.advance(1);
      await here.cache.wrote('key:1');
      expect(kind(await there.cache.lookup('a', 'key:1'))).toBe('miss');
      expect(kind(await there.cache.lookup('a', 'key:2'))).toBe('hit:memory');
    });

    it('serves a keyed caller nothing while Redis is away, and anonymous callers their memory', async () => {
      here.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
      here.redis.up = false;
      expect(kind(await here.cache.lookup('a', 'key:1'))).toBe('bypass');
      expect(kind(await here.cache.lookup('a'))).toBe('hit:memory');
    });

    it('refuses, once its stream is back, what Redis holds from before', async () => {
      there.cache.store('a', answerOf(clock, ['pet:1']), MAX_AGE_MS);
      await there.cache.settled();
      clock.advance(1);
      here.cache.streamLost();
      expect(kind(await here.cache.lookup('a'))).toBe('bypass');
      clock.advance(1);
      here.cache.streamJoined();
      expect(kind(await here.cache.lookup('a'))).toBe('miss');
      expect(kind(await there.cache.lookup('a'))).toBe('hit:memory');
    });
  });
});
