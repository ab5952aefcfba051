import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { BanPolicy, LimiterStore, StoreOutcome } from '../../src/limits/limiter-store';
import { MemoryLimiterStore } from '../../src/limits/memory.store';
import { RedisLimiterStore } from '../../src/limits/redis.store';
import { DAY_MS, MINUTE_MS, type WindowSpec } from '../../src/limits/window';
import { eachStore, withRedis } from '../helpers/services';

/**
 * One contract, every store: the memory store always, the Redis store when REDIS_URL is set
 * (shown as skipped without it).
 * Times are explicit `now` values, far from Redis's own clock, as the stores promise to use the
 * caller's clock only. Redis keys get a prefix of their own and are deleted afterwards.
 */
const T0 = 1_700_000_000_250;
const specs = (minute: number, day: number): WindowSpec[] => [
  { name: 'minute', limit: minute, lengthMs: MINUTE_MS },
  { name: 'day', limit: day, lengthMs: DAY_MS },
];
const NO_BANS: BanPolicy = { threshold: 1_000_000, durationMs: 900_000 };
const BAN: BanPolicy = { threshold: 2, durationMs: 900_000 };

interface Subject {
  store: LimiterStore;
  close(): Promise<void>;
}

const redisUrl = process.env.REDIS_URL;
const prefix = `rl-test-${randomBytes(4).toString('hex')}`;

async function redisSubject(): Promise<Subject> {
  const redis = new Redis(redisUrl as string);
  return {
    store: new RedisLimiterStore(redis, prefix),
    async close() {
      await deleteKeys(redis, `${prefix}:*`);
      await redis.quit();
    },
  };
}

async function deleteKeys(redis: Redis, match: string): Promise<void> {
  const keys: string[] = [];
  for await (const batch of redis.scanStream({ match, count: 500 })) keys.push(...(batch as string[]));
  if (keys.length > 0) await redis.del(...keys);
}

const subjects = eachStore<() => Promise<Subject>>([
  ['memory', async () => ({ store: new MemoryLimiterStore(), close: async () => {} })],
  ['redis', redisSubject],
]);

let counter = 0;
const freshIdentity = () => `key:${process.pid}-${Date.now()}-${counter++}`;

async function hits(store: LimiterStore, id: string, windows: WindowSpec[], now: number, n: number, ban = NO_BANS) {
  const outcomes: StoreOutcome[] = [];
  for (let i = 0; i < n; i++) outcomes.push(await store.hit(id, windows, now, ban));
  return outcomes;
}

const remaining = (outcome: { windows: { remaining: number }[] }) => outcome.windows.map((w) => w.remaining);

for (const [name, makeSubject, suite] of subjects) suite(`${name} limiter store`, () => {
  let subject: Subject;
  let store: LimiterStore;
  let id: string;

  beforeAll(async () => {
    subject = await makeSubject();
    store = subject.store;
  });
  afterAll(() => subject.close());
  beforeEach(() => {
    id = freshIdentity();
  });

  it('shows a fresh identity with full windows that would start now, and no ban', async () => {
    expect(await store.peek(id, specs(3, 5), T0)).toEqual([
      { name: 'minute', limit: 3, lengthMs: MINUTE_MS, remaining: 3, resetAt: T0 + MINUTE_MS },
      { name: 'day', limit: 5, lengthMs: DAY_MS, remaining: 5, resetAt: T0 + DAY_MS },
    ]);
    expect(await store.bannedUntil(id, T0)).toBeNull();
  });

  it('counts a hit once in both windows, which start at the first hit and do not slide', async () => {
    const first = await store.hit(id, specs(3, 5), T0, NO_BANS);
    expect(first).toEqual({
      kind: 'allowed',
      windows: [
        { name: 'minute', limit: 3, lengthMs: MINUTE_MS, remaining: 2, resetAt: T0 + MINUTE_MS },
        { name: 'day', limit: 5, lengthMs: DAY_MS, remaining: 4, resetAt: T0 + DAY_MS },
      ],
    });
    const second = await store.hit(id, specs(3, 5), T0 + 1_000, NO_BANS);
    expect(second.windows.map((w) => [w.remaining, w.resetAt])).toEqual([
      [1, T0 + MINUTE_MS],
      [3, T0 + DAY_MS],
    ]);
  });

  it('counts nothing on peek', async () => {
    await store.hit(id, specs(3, 5), T0, NO_BANS);
    for (let i = 0; i < 5; i++) await store.peek(id, specs(3, 5), T0 + i);
    expect(remaining({ windows: await store.peek(id, specs(3, 5), T0 + 10) })).toEqual([2, 4]);
    expect(remaining(await store.hit(id, specs(3, 5), T0 + 10, NO_BANS))).toEqual([1, 3]);
  });

  describe('refund (a request answered 304 counts nothing)', () => {
    it('gives back one request in both windows, leaving them as before the hit', async () => {
      await store.hit(id, specs(3, 5), T0, NO_BANS);
      const counted = await store.hit(id, specs(3, 5), T0 + 1_000, NO_BANS);
      expect(remaining(counted)).toEqual([1, 3]);
      const refunded = await store.refund(id, counted.windows, T0 + 2_000);
      expect(refunded).toEqual([
        { name: 'minute', limit: 3, lengthMs: MINUTE_MS, remaining: 2, resetAt: T0 + MINUTE_MS },
        { name: 'day', limit: 5, lengthMs: DAY_MS, remaining: 4, resetAt: T0 + DAY_MS },
      ]);
      expect(await store.peek(id, specs(3, 5), T0 + 2_000)).toEqual(refunded);
    });

    it('makes room again in a full window', async () => {
      const outcomes = await hits(store, id, specs(2, 5), T0, 2);
      expect((await store.hit(id, specs(2, 5), T0 + 1, NO_BANS)).kind).toBe('limited');
      await store.refund(id, outcomes[1].windows, T0 + 2);
      expect((await store.hit(id, specs(2, 5), T0 + 3, NO_BANS)).kind).toBe('allowed');
    });

    it('gives nothing back to a window that freed and started again since the count', async () => {
      const [counted] = await hits(store, id, specs(3, 5), T0, 1);
      const restarted = await store.hit(id, specs(3, 5), T0 + MINUTE_MS, NO_BANS);
      expect(remaining(restarted)).toEqual([2, 3]);
      // The minute window now running did not count the refunded request; the day window did.
      expect(remaining({ windows: await store.refund(id, counted.windows, T0 + MINUTE_MS + 1) })).toEqual([2, 4]);
    });

    it('gives back nothing to a freed window, an unknown identity, or below zero', async () => {
      const [counted] = await hits(store, id, specs(3, 5), T0, 1);
      expect(remaining({ windows: await store.refund(id, counted.windows, T0 + MINUTE_MS) })).toEqual([3, 5]);
      expect(remaining({ windows: await store.refund(freshIdentity(), counted.windows, T0) })).toEqual([3, 5]);
      const other = freshIdentity();
      const [once] = await hits(store, other, specs(3, 5), T0, 1);
      await store.refund(other, once.windows, T0 + 1);
      expect(remaining({ windows: await store.refund(other, once.windows, T0 + 2) })).toEqual([3, 5]);
      expect(remaining(await store.hit(other, specs(3, 5), T0 + 3, NO_BANS))).toEqual([2, 4]);
    });

    it('gives back at most a window’s limit in one run, then nothing in either window, and again once the window restarts', async () => {
      const refundEach = async (at: number, n: number) => {
        let windows: { remaining: number }[] = [];
        for (let i = 0; i < n; i += 1) windows = await store.refund(id, (await store.hit(id, specs(3, 50), at + i, NO_BANS)).windows, at + i);
        return remaining({ windows });
      };
      // Three given back: the minute's limit. The fourth counts, in the minute and the day alike.
      expect(await refundEach(T0, 3)).toEqual([3, 50]);
      expect(await refundEach(T0 + 10, 1)).toEqual([2, 49]);
      expect(remaining(await store.hit(id, specs(3, 50), T0 + 20, NO_BANS))).toEqual([1, 48]);
      // A new minute gives back again; the day, still in its run, has given back 3 of its 50.
      expect(await refundEach(T0 + MINUTE_MS, 3)).toEqual([3, 48]);
      expect(await refundEach(T0 + MINUTE_MS + 10, 1)).toEqual([2, 47]);
    });
  });

  it('frees a window exactly at its reset time, not a millisecond before', async () => {
    await hits(store, id, specs(3, 5), T0, 3);
    const before = await store.hit(id, specs(3, 5), T0 + MINUTE_MS - 1, NO_BANS);
    expect(before).toMatchObject({ kind: 'limited', refusedBy: 'minute' });
    const at = await store.hit(id, specs(3, 5), T0 + MINUTE_MS, NO_BANS);
    expect(at.kind).toBe('allowed');
    expect(at.windows.map((w) => [w.remaining, w.resetAt])).toEqual([
      [2, T0 + 2 * MINUTE_MS],
      [1, T0 + DAY_MS],
    ]);
  });

  it('consumes nothing in either window on a refusal', async () => {
    await hits(store, id, specs(2, 10), T0, 2);
    const refused = await hits(store, id, specs(2, 10), T0 + 5, 3);
    expect(refused.map((o) => o.kind)).toEqual(['limited', 'limited', 'limited']);
    expect(await store.peek(id, specs(2, 10), T0 + 10)).toEqual([
      expect.objectContaining({ name: 'minute', remaining: 0, resetAt: T0 + MINUTE_MS }),
      expect.objectContaining({ name: 'day', remaining: 8, resetAt: T0 + DAY_MS }),
    ]);
  });

  it('reports the window that frees last when both are full', async () => {
    await hits(store, id, specs(2, 2), T0, 2);
    expect(await store.hit(id, specs(2, 2), T0 + 1, NO_BANS)).toMatchObject({ kind: 'limited', refusedBy: 'day' });
  });

  it('does not start a window on a refused request', async () => {
    await store.hit(id, specs(2, 3), T0, NO_BANS);
    await hits(store, id, specs(2, 3), T0 + DAY_MS - 30_000, 2);
    // The day window has freed; the minute window still runs and refuses.
    const now = T0 + DAY_MS;
    expect(await store.hit(id, specs(2, 3), now, NO_BANS)).toMatchObject({ kind: 'limited', refusedBy: 'minute' });
    expect(await store.peek(id, specs(2, 3), now + 1)).toEqual([
      expect.objectContaining({ name: 'minute', remaining: 0, resetAt: T0 + DAY_MS + 30_000 }),
      expect.objectContaining({ name: 'day', remaining: 3, resetAt: now + 1 + DAY_MS }),
    ]);
  });

  it('answers refusals 1..threshold limited and bans at refusal threshold + 1', async () => {
    await hits(store, id, specs(3, 100), T0, 3, BAN);
    const refused = await hits(store, id, specs(3, 100), T0 + 1_000, 3, BAN);
    expect(refused.map((o) => o.kind)).toEqual(['limited', 'limited', 'banned']);
    expect(refused[2]).toMatchObject({ bannedUntil: T0 + 1_000 + BAN.durationMs });
    expect(await store.bannedUntil(id, T0 + 1_001)).toBe(T0 + 1_000 + BAN.durationMs);
  });

  it('counts toward a ban no refusal of a request sent before the run’s first refusal was decided, and every one sent after', async () => {
    await hits(store, id, specs(3, 100), T0, 3, BAN);
    const told = T0 + 1_000;
    expect(await store.hit(id, specs(3, 100), told, BAN, T0 + 10)).toMatchObject({ kind: 'limited' });
    // A burst sent with the first: however many, and however late decided, refused and never banned.
    for (let i = 1; i <= 5; i += 1) expect(await store.hit(id, specs(3, 100), told + i, BAN, told - 1)).toMatchObject({ kind: 'limited' });
    // Sent once the client could have been told: refusal 2, then refusal 3 bans (threshold 2).
    expect(await store.hit(id, specs(3, 100), told + 10, BAN, told)).toMatchObject({ kind: 'limited' });
    expect(await store.hit(id, specs(3, 100), told + 11, BAN, told + 11)).toMatchObject({ kind: 'banned', bannedUntil: told + 11 + BAN.durationMs });
  });

  it('bans everything during a ban, counting nothing and never lengthening it', async () => {
    await hits(store, id, specs(3, 100), T0, 3, BAN);
    await hits(store, id, specs(3, 100), T0, 3, BAN);
    const until = T0 + BAN.durationMs;
    // By now the minute window has freed: only the ban refuses.
    for (const now of [T0 + 1, T0 + 2 * MINUTE_MS, until - 1]) {
      expect(await store.hit(id, specs(3, 100), now, BAN)).toMatchObject({ kind: 'banned', bannedUntil: until });
    }
    expect(await store.bannedUntil(id, until - 1)).toBe(until);
    expect(await store.bannedUntil(id, until)).toBeNull();
    expect(remaining({ windows: await store.peek(id, specs(3, 100), until) })).toEqual([3, 97]);
    expect(await store.hit(id, specs(3, 100), until, BAN)).toMatchObject({ kind: 'allowed' });
  });

  it('restarts the refusal count when the refusing window frees', async () => {
    await hits(store, id, specs(3, 100), T0, 3, BAN);
    expect((await hits(store, id, specs(3, 100), T0 + 1, 2, BAN)).map((o) => o.kind)).toEqual(['limited', 'limited']);
    const next = T0 + MINUTE_MS;
    await hits(store, id, specs(3, 100), next, 3, BAN);
    const refused = await hits(store, id, specs(3, 100), next + 1, 3, BAN);
    expect(refused.map((o) => o.kind)).toEqual(['limited', 'limited', 'banned']);
  });

  it('clears the refusal count when a ban starts, so the next ban is earned afresh', async () => {
    const ban = { threshold: 1, durationMs: MINUTE_MS };
    await hits(store, id, specs(100, 3), T0, 3, ban);
    const first = await hits(store, id, specs(100, 3), T0 + 1, 2, ban);
    expect(first.map((o) => o.kind)).toEqual(['limited', 'banned']);
    // The ban ends while the day window is still full.
    const afterBan = await hits(store, id, specs(100, 3), T0 + 1 + MINUTE_MS, 2, ban);
    expect(afterBan.map((o) => o.kind)).toEqual(['limited', 'banned']);
  });

  it('unbans: the ban and the refusal count go, the windows stay', async () => {
    await hits(store, id, specs(3, 100), T0, 3, BAN);
    await hits(store, id, specs(3, 100), T0 + 1, 3, BAN);
    await store.unban(id);
    expect(await store.bannedUntil(id, T0 + 2)).toBeNull();
    expect(remaining({ windows: await store.peek(id, specs(3, 100), T0 + 2) })).toEqual([0, 97]);
    const refused = await hits(store, id, specs(3, 100), T0 + 2, 3, BAN);
    expect(refused.map((o) => o.kind)).toEqual(['limited', 'limited', 'banned']);
  });

  it('unbans a limited identity by forgetting its refusals', async () => {
    await hits(store, id, specs(3, 100), T0, 3, BAN);
    await hits(store, id, specs(3, 100), T0 + 1, 2, BAN);
    await store.unban(id);
    const refused = await hits(store, id, specs(3, 100), T0 + 2, 3, BAN);
    expect(refused.map((o) => o.kind)).toEqual(['limited', 'limited', 'banned']);
  });

  it('bans at the first refusal when the threshold is 0', async () => {
    const ban = { threshold: 0, durationMs: 5_000 };
    await hits(store, id, specs(1, 100), T0, 1, ban);
    expect(await store.hit(id, specs(1, 100), T0 + 1, ban)).toMatchObject({ kind: 'banned', bannedUntil: T0 + 5_001 });
  });

  it('counts identities apart', async () => {
    const other = freshIdentity();
    await hits(store, id, specs(2, 100), T0, 2);
    expect(await store.hit(other, specs(2, 100), T0, NO_BANS)).toMatchObject({ kind: 'allowed' });
    expect(await store.hit(id, specs(2, 100), T0, NO_BANS)).toMatchObject({ kind: 'limited' });
  });

  it('takes a ban carried from another store, unless a ban ending later stands', async () => {
    await store.ban(id, T0 + 5_000, T0);
    expect(await store.bannedUntil(id, T0)).toBe(T0 + 5_000);
    expect(await store.hit(id, specs(3, 5), T0 + 1, NO_BANS)).toMatchObject({ kind: 'banned', bannedUntil: T0 + 5_000 });
    await store.ban(id, T0 + 1_000, T0);
    expect(await store.bannedUntil(id, T0)).toBe(T0 + 5_000);
    await store.ban(id, T0 + 9_000, T0 + 2);
    expect(await store.bannedUntil(id, T0 + 8_999)).toBe(T0 + 9_000);
    expect(await store.bannedUntil(id, T0 + 9_000)).toBeNull();
    await store.ban(freshIdentity(), T0, T0); // already over: nothing to do
  });

  it('accepts an unban of an identity it has never seen', async () => {
    await expect(store.unban(id)).resolves.toBeUndefined();
    expect(await store.bannedUntil(id, T0)).toBeNull();
  });

  it('admits exactly the limit among 150 concurrent hits, and keeps the ban count exact', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 150 }, () => store.hit(id, specs(60, 1_000), T0, { threshold: 10, durationMs: 900_000 })),
    );
    const kinds = outcomes.map((o) => o.kind);
    expect(kinds.filter((k) => k === 'allowed')).toHaveLength(60);
    expect(kinds.filter((k) => k === 'limited')).toHaveLength(10);
    expect(kinds.filter((k) => k === 'banned')).toHaveLength(80);
    expect(remaining({ windows: await store.peek(id, specs(60, 1_000), T0) })).toEqual([0, 940]);
  });
});

withRedis('redis limiter store across instances', () => {
  let a: Redis;
  let b: Redis;
  beforeAll(() => {
    a = new Redis(redisUrl as string);
    b = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    await deleteKeys(a, `${prefix}x:*`);
    await Promise.all([a.quit(), b.quit()]);
  });

  it('admits exactly the limit among 150 concurrent hits from two clients', async () => {
    const stores = [new RedisLimiterStore(a, `${prefix}x`), new RedisLimiterStore(b, `${prefix}x`)];
    const id = freshIdentity();
    const outcomes = await Promise.all(
      Array.from({ length: 150 }, (_, i) => stores[i % 2].hit(id, specs(60, 1_000), T0, NO_BANS)),
    );
    expect(outcomes.filter((o) => o.kind === 'allowed')).toHaveLength(60);
    expect(outcomes.filter((o) => o.kind === 'limited')).toHaveLength(90);
  });

  it('keeps an identity in hash-tagged keys that all expire', async () => {
    const store = new RedisLimiterStore(a, `${prefix}x`);
    const id = freshIdentity();
    await hits(store, id, specs(1, 100), T0, 1);
    await hits(store, id, specs(1, 100), T0, 2, { threshold: 1, durationMs: 30_000 });
    const keys = ['minute', 'day', 'ban'].map((part) => store.key(id, part));
    expect(keys[0]).toBe(`${prefix}x:{${id}}:minute`);
    const ttls = await Promise.all(keys.map((key) => a.pttl(key)));
    expect(ttls[0]).toBeGreaterThan(0);
    expect(ttls[0]).toBeLessThanOrEqual(MINUTE_MS);
    expect(ttls[1]).toBeGreaterThan(MINUTE_MS);
    expect(ttls[1]).toBeLessThanOrEqual(DAY_MS);
    expect(ttls[2]).toBeGreaterThan(0);
    expect(ttls[2]).toBeLessThanOrEqual(30_000);
    // A refusal that does not ban leaves a counter that expires with the refusing window.
    const other = freshIdentity();
    await hits(store, other, specs(1, 100), T0, 2, BAN);
    const refusalsTtl = await a.pttl(store.key(other, 'refusals'));
    expect(refusalsTtl).toBeGreaterThan(0);
    expect(refusalsTtl).toBeLessThanOrEqual(MINUTE_MS);
  });
});
