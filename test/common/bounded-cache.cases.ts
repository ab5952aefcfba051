import { boundedCache } from '../../src/common/bounded-cache';

describe('boundedCache', () => {
  it('holds at most its bound of entries, evicting the one least recently used', () => {
    const cache = boundedCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(1);
    cache.set('d', 4);
    expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd']);
    expect(cache.size).toBe(3);
  });

  it('keeps the options it is given, a time to live among them', () => {
    let now = 1;
    const cache = boundedCache<string, number>(10, { ttl: 1_000, ttlResolution: 0, perf: { now: () => now } });
    cache.set('a', 1);
    now = 1_000;
    expect(cache.get('a')).toBe(1);
    now = 1_002;
    expect(cache.get('a')).toBeUndefined();
  });

  it('allocates its index as entries arrive, not for its whole bound when made', () => {
    const before = process.memoryUsage().arrayBuffers;
    const cache = boundedCache<string, number>(1_000_000);
    const grown = process.memoryUsage().arrayBuffers - before;
    cache.set('a', 1);
    // With `max: 1_000_000`, lru-cache allocates 12 MB of typed arrays here.
    expect(grown).toBeLessThan(1_000_000);
  });
});
