import { MemoryLimiterStore } from '../../src/limits/memory.store';
import { DAY_MS, MINUTE_MS, type WindowSpec } from '../../src/limits/window';

const T0 = 1_700_000_000_250;
const SPECS: WindowSpec[] = [
  { name: 'minute', limit: 1, lengthMs: MINUTE_MS },
  { name: 'day', limit: 10, lengthMs: DAY_MS },
];
const BAN = { threshold: 0, durationMs: 2 * DAY_MS };

describe('MemoryLimiterStore', () => {
  it('forgets identities once their windows, refusals and bans have all expired', async () => {
    const store = new MemoryLimiterStore();
    for (let i = 0; i < 100; i++) await store.hit(`ip:10.0.0.${i}`, SPECS, T0, BAN);
    await store.hit('key:banned', SPECS, T0, BAN);
    await store.hit('key:banned', SPECS, T0, BAN);
    expect(store.size).toBe(101);

    // A day later every window has freed, but the ban still runs.
    await store.hit('key:late', SPECS, T0 + DAY_MS, BAN);
    expect(store.size).toBe(2);
    expect(await store.bannedUntil('key:banned', T0 + DAY_MS)).toBe(T0 + 2 * DAY_MS);

    await store.hit('key:later', SPECS, T0 + 3 * DAY_MS, BAN);
    expect(store.size).toBe(1);
  });

  it('holds at most its bound of identities, forgetting the one least recently seen', async () => {
    const store = new MemoryLimiterStore(3);
    for (const identity of ['ip:a', 'ip:b', 'ip:c']) await store.hit(identity, SPECS, T0, BAN);
    // Refused, then banned: seen again, so kept.
    await store.hit('ip:a', SPECS, T0, BAN);
    await store.hit('ip:d', SPECS, T0, BAN);
    expect(store.size).toBe(3);
    expect(await store.bannedUntil('ip:a', T0)).toBe(T0 + BAN.durationMs);
    expect((await store.peek('ip:b', SPECS, T0)).map((window) => window.remaining)).toEqual([1, 10]);
    expect((await store.peek('ip:c', SPECS, T0)).map((window) => window.remaining)).toEqual([0, 9]);
  });

  it('does not hold an entry for an identity it was only asked about', async () => {
    const store = new MemoryLimiterStore();
    await store.peek('ip:10.0.0.1', SPECS, T0);
    await store.bannedUntil('ip:10.0.0.1', T0);
    await store.unban('ip:10.0.0.1');
    expect(store.size).toBe(0);
  });
});
