import { type Decision, RateLimiter } from '../../src/limits/limiter';
import { MemoryLimiterStore } from '../../src/limits/memory.store';
import { planQuota, Plan } from '../../src/auth/plans';
import { rateLimitHeaders } from '../../src/limits/rate-limit-headers';
import { DAY_MS, MINUTE_MS } from '../../src/limits/window';
import { type TestClock, testClock } from '../helpers/clock';

const FREE = planQuota(Plan.FREE);
const ENTERPRISE_LIKE = { perMinute: 100, perDay: 5 };
const BAN = { threshold: 3, durationMs: 900_000 };
const ID = 'key:42';

let clock: TestClock;
let limiter: RateLimiter;
let T0: number;

beforeEach(() => {
  clock = testClock();
  T0 = clock();
  limiter = new RateLimiter(new MemoryLimiterStore(), BAN, clock);
});

async function checks(n: number, quota = FREE, identity = ID): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (let i = 0; i < n; i++) decisions.push(await limiter.check(identity, quota));
  return decisions;
}

const left = (d: { windows: { name: string; remaining: number }[] }) =>
  Object.fromEntries(d.windows.map((w) => [w.name, w.remaining]));

describe('RateLimiter windows', () => {
  it('accepts the 59th and 60th request of a minute and refuses the 61st', async () => {
    await checks(58);
    clock.advance(30_000);
    const [d59, d60, d61] = await checks(3);
    expect(d59).toMatchObject({ kind: 'allowed', reported: { name: 'minute', remaining: 1 } });
    expect(d60).toMatchObject({ kind: 'allowed', reported: { name: 'minute', remaining: 0, resetAt: T0 + MINUTE_MS } });
    expect(d61).toMatchObject({ kind: 'limited', reported: { name: 'minute', remaining: 0 }, retryAfterSeconds: 30 });
  });

  it('still refuses a millisecond before the reset and accepts at the reset', async () => {
    await checks(60);
    clock.set(T0 + MINUTE_MS - 1);
    expect(await limiter.check(ID, FREE)).toMatchObject({ kind: 'limited', retryAfterSeconds: 1 });
    clock.set(T0 + MINUTE_MS);
    const accepted = await limiter.check(ID, FREE);
    expect(accepted.kind).toBe('allowed');
    expect(left(accepted)).toEqual({ minute: 59, day: 939 });
    expect(accepted.windows.map((w) => w.resetAt)).toEqual([T0 + 2 * MINUTE_MS, T0 + DAY_MS]);
  });

  it('resets the minute and day windows independently', async () => {
    await checks(1, { perMinute: 10, perDay: 20 });
    clock.set(T0 + DAY_MS - 30_000);
    const late = await checks(2, { perMinute: 10, perDay: 20 });
    expect(late[1].windows.map((w) => w.resetAt)).toEqual([T0 + DAY_MS + 30_000, T0 + DAY_MS]);
    clock.set(T0 + DAY_MS);
    const next = await limiter.check(ID, { perMinute: 10, perDay: 20 });
    // The day window starts again; the minute window keeps running and counting.
    expect(left(next)).toEqual({ minute: 7, day: 19 });
    expect(next.windows.map((w) => w.resetAt)).toEqual([T0 + DAY_MS + 30_000, T0 + 2 * DAY_MS]);
  });

  it('reports and refuses by the day window when it runs out first', async () => {
    const accepted = await checks(5, ENTERPRISE_LIKE);
    expect(accepted.map((d) => [d.kind, d.reported.name, d.reported.remaining])).toEqual([
      ['allowed', 'day', 4],
      ['allowed', 'day', 3],
      ['allowed', 'day', 2],
      ['allowed', 'day', 1],
      ['allowed', 'day', 0],
    ]);
    clock.advance(1_000);
    const sixth = await limiter.check(ID, ENTERPRISE_LIKE);
    expect(sixth).toMatchObject({ kind: 'limited', reported: { name: 'day', limit: 5, remaining: 0 } });
    expect(sixth.kind === 'limited' && sixth.retryAfterSeconds).toBe((DAY_MS - 1_000) / 1000);
    expect(rateLimitHeaders(sixth)).toMatchObject({
      'X-RateLimit-Limit': '5',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.ceil((T0 + DAY_MS) / 1000)),
    });
  });

  it('reports the window that resets first when both have as many requests left', async () => {
    const [first] = await checks(1, { perMinute: 5, perDay: 5 });
    expect(first.reported.name).toBe('minute');
  });

  it('uses nothing of the day window for a request the minute window refuses', async () => {
    await checks(60);
    const refused = await checks(2);
    expect(refused.map((d) => d.kind)).toEqual(['limited', 'limited']);
    expect(left(refused[1])).toEqual({ minute: 0, day: 940 });
    clock.advance(MINUTE_MS);
    expect(left(await limiter.check(ID, FREE))).toEqual({ minute: 59, day: 939 });
  });

  it('refuses by the window that frees last when both are full', async () => {
    await checks(2, { perMinute: 2, perDay: 2 });
    const refused = await limiter.check(ID, { perMinute: 2, perDay: 2 });
    expect(refused).toMatchObject({ kind: 'limited', reported: { name: 'day' }, retryAfterSeconds: DAY_MS / 1000 });
  });

  it('peeks without counting, describing the same window as the headers', async () => {
    await checks(3, ENTERPRISE_LIKE);
    const view = await limiter.peek(ID, ENTERPRISE_LIKE);
    expect(view).toMatchObject({ reported: { name: 'day', remaining: 2 }, bannedUntil: null, decidedAt: T0 });
    expect((await limiter.peek(ID, ENTERPRISE_LIKE)).reported.remaining).toBe(2);
  });
});

describe('RateLimiter bans', () => {
  async function exhaustMinute() {
    await checks(60);
  }

  it('answers refusals 1..threshold limited and bans at refusal threshold + 1', async () => {
    await exhaustMinute();
    clock.advance(10_000);
    const refused = await checks(4);
    expect(refused.map((d) => d.kind)).toEqual(['limited', 'limited', 'limited', 'banned']);
    expect(refused[3]).toMatchObject({ bannedUntil: clock() + BAN.durationMs, retryAfterSeconds: 900 });
    expect(await limiter.bannedUntil(ID)).toBe(clock() + BAN.durationMs);
  });

  it('lasts exactly the ban length, which requests during it do not lengthen', async () => {
    await exhaustMinute();
    await checks(4);
    const until = T0 + BAN.durationMs;
    clock.set(T0 + 5 * MINUTE_MS);
    const during = await checks(20);
    expect(during.every((d) => d.kind === 'banned' && d.bannedUntil === until)).toBe(true);
    expect(during[0]).toMatchObject({ retryAfterSeconds: (until - clock()) / 1000 });
    clock.set(until - 1);
    expect(await limiter.check(ID, FREE)).toMatchObject({ kind: 'banned', retryAfterSeconds: 1 });
    clock.set(until);
    const after = await limiter.check(ID, FREE);
    expect(after.kind).toBe('allowed');
    // Nothing during the ban was counted: 60 before it, 1 now.
    expect(left(after)).toEqual({ minute: 59, day: 939 });
  });

  it('restarts the refusal count when the refusing window frees', async () => {
    await exhaustMinute();
    expect((await checks(3)).map((d) => d.kind)).toEqual(['limited', 'limited', 'limited']);
    clock.advance(MINUTE_MS);
    await exhaustMinute();
    expect((await checks(4)).map((d) => d.kind)).toEqual(['limited', 'limited', 'limited', 'banned']);
  });

  it('unbans: the ban and the refusal count go, the windows stay', async () => {
    await exhaustMinute();
    await checks(4);
    await limiter.unban(ID);
    expect(await limiter.bannedUntil(ID)).toBeNull();
    const again = await checks(4);
    expect(again.map((d) => d.kind)).toEqual(['limited', 'limited', 'limited', 'banned']);
    expect(left(again[0])).toEqual({ minute: 0, day: 940 });
  });

  it('bans at the first refusal when the threshold is 0', async () => {
    limiter = new RateLimiter(new MemoryLimiterStore(), { threshold: 0, durationMs: 60_000 }, clock);
    await exhaustMinute();
    expect(await limiter.check(ID, FREE)).toMatchObject({ kind: 'banned', bannedUntil: T0 + 60_000 });
  });

  it('reports the window that runs out first on a ban', async () => {
    await exhaustMinute();
    const [, , , banned] = await checks(4);
    expect(banned).toMatchObject({ kind: 'banned', reported: { name: 'minute', remaining: 0 } });
  });

  it('keeps bans to their identity', async () => {
    await exhaustMinute();
    await checks(4);
    expect(await limiter.check('ip:127.0.0.1', FREE)).toMatchObject({ kind: 'allowed' });
  });
});

describe('RateLimiter refund', () => {
  it('answers an allowed decision as the windows stand once its count is given back, at the clock of the refund', async () => {
    const [, second] = await checks(2);
    clock.advance(5_000);
    const refunded = await limiter.refund(ID, second);
    expect(refunded).toMatchObject({ kind: 'allowed', decidedAt: T0 + 5_000, reported: { name: 'minute', remaining: 59, resetAt: T0 + MINUTE_MS } });
    expect(left(refunded)).toEqual({ minute: 59, day: 999 });
    expect(rateLimitHeaders(refunded)).toMatchObject({ 'X-RateLimit-Remaining': '59', RateLimit: '"minute";r=59;t=55, "day";r=999;t=86395' });
  });

  it('gives nothing back for a refusal, which counted nothing', async () => {
    const [, , refused] = await checks(3, { perMinute: 2, perDay: 10 });
    expect(refused.kind).toBe('limited');
    expect(await limiter.refund(ID, refused)).toBe(refused);
    expect(left(await limiter.peek(ID, { perMinute: 2, perDay: 10 }))).toEqual({ minute: 0, day: 8 });
  });
});

