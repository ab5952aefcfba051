import { DatabaseTime } from '../../src/db/database-time';
import { testClock } from '../helpers/clock';

const MINUTE_OF_TEN_SECONDS = 10_000;

describe('DatabaseTime', () => {
  it('lets an identity start statements until it has spent its allowance, then says how long to wait', () => {
    const clock = testClock();
    const time = new DatabaseTime(clock);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBe(0);
    time.spend('a', MINUTE_OF_TEN_SECONDS, 9_999);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBe(0);
    time.spend('a', MINUTE_OF_TEN_SECONDS, 1);
    // Empty: 1 ms of statement time comes back every 6 ms at 10 s a minute.
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBe(1);
    clock.advance(6);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBe(0);
  });

  it('makes an identity that overdrew pay its debt back before its next statement', () => {
    const clock = testClock();
    const time = new DatabaseTime(clock);
    // One statement may run longer than what was left: it cannot be known beforehand.
    time.spend('a', MINUTE_OF_TEN_SECONDS, 12_000);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBe(12_001);
    clock.advance(12_000);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBe(1);
    clock.advance(1);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBe(0);
  });

  it('refills evenly over a minute, never beyond one allowance', () => {
    const clock = testClock();
    const time = new DatabaseTime(clock);
    time.spend('a', MINUTE_OF_TEN_SECONDS, 10_000);
    clock.advance(30_000); // half a minute: 5 s back
    time.spend('a', MINUTE_OF_TEN_SECONDS, 4_999);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBe(0);
    time.spend('a', MINUTE_OF_TEN_SECONDS, 1);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBeGreaterThan(0);
    clock.advance(10 * 60_000); // idle for ten minutes: still one allowance, not ten
    time.spend('a', MINUTE_OF_TEN_SECONDS, 10_000);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBeGreaterThan(0);
  });

  it('keeps identities apart, each on its own allowance', () => {
    const time = new DatabaseTime(testClock());
    time.spend('free', MINUTE_OF_TEN_SECONDS, 10_000);
    time.spend('business', 60_000, 10_000);
    expect(time.waitMs('free', MINUTE_OF_TEN_SECONDS)).toBeGreaterThan(0);
    expect(time.waitMs('business', 60_000)).toBe(0);
    expect(time.waitMs('other', MINUTE_OF_TEN_SECONDS)).toBe(0);
  });

  it('forgets identities idle long enough to be full again, so many addresses cost no memory', () => {
    const clock = testClock();
    const time = new DatabaseTime(clock);
    for (let i = 0; i < 1_000; i += 1) time.spend(`ip:${i}`, MINUTE_OF_TEN_SECONDS, 100);
    clock.advance(120_000);
    for (let i = 1_000; i < 1_100; i += 1) time.spend(`ip:${i}`, MINUTE_OF_TEN_SECONDS, 100);
    expect(time.size).toBeLessThanOrEqual(100);
    expect(time.waitMs('ip:0', MINUTE_OF_TEN_SECONDS)).toBe(0);
  });

  it('holds at most its bound of buckets, forgetting the one least recently charged', () => {
    const time = new DatabaseTime(testClock(), 60_000, 2);
    time.spend('a', MINUTE_OF_TEN_SECONDS, 20_000);
    time.spend('b', MINUTE_OF_TEN_SECONDS, 20_000);
    time.spend('a', MINUTE_OF_TEN_SECONDS, 1);
    time.spend('c', MINUTE_OF_TEN_SECONDS, 20_000);
    expect(time.size).toBe(2);
    expect(time.waitMs('a', MINUTE_OF_TEN_SECONDS)).toBeGreaterThan(0);
    expect(time.waitMs('b', MINUTE_OF_TEN_SECONDS)).toBe(0);
  });
});
