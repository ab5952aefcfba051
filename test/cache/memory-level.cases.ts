import { type CachedAnswer, MemoryLevel, type Removal } from '../../src/cache/memory-level';
import { testClock } from '../helpers/clock';

/** This process's level (src/cache/memory-level.ts): its byte bound, its purges by tag, its ttl, on a clock moved by hand. */
const TTL_MS = 60_000;
const answer = (tags: string[], size = 100): CachedAnswer => ({ body: 'x'.repeat(size), tags, startedAt: 0 });

function level(maxBytes = 1024 * 1024) {
  const clock = testClock();
  const removed: Removal[] = [];
  return { clock, removed, memory: new MemoryLevel(maxBytes, TTL_MS, (why) => removed.push(why), clock) };
}

it('keeps answers until the byte bound, then evicts the least recently used first', () => {
  // Each answer takes about 2 × 10,000 bytes of text and its overhead: five fit in 110,000 bytes, not six.
  const { memory, removed } = level(110_000);
  for (const key of ['a', 'b', 'c', 'd', 'e']) memory.set(key, answer([`pet:${key}`], 10_000), TTL_MS);
  expect(removed).toEqual([]);
  memory.get('a'); // now the most recently used
  memory.set('f', answer(['pet:f'], 10_000), TTL_MS);
  expect(removed).toEqual(['evicted']);
  expect(memory.get('b')).toBeUndefined();
  for (const key of ['a', 'c', 'd', 'e', 'f']) expect(memory.get(key)).toBeDefined();
  // An evicted answer leaves its tags' index: purging its tag removes nothing.
  expect(memory.purge(['pet:b'])).toBe(0);
});

it('does not keep an answer larger than the whole bound, nor remember its tags', () => {
  const { memory } = level(10_000);
  memory.set('big', answer(['pet:1'], 10_000), TTL_MS);
  expect(memory.get('big')).toBeUndefined();
  memory.set('big', answer(['pet:2']), TTL_MS);
  // The answer now under that key read pet:2 only: a purge of pet:1 leaves it.
  expect(memory.purge(['pet:1'])).toBe(0);
  expect(memory.get('big')?.tags).toEqual(['pet:2']);
});

it('purges every answer carrying one of the tags, and only those', () => {
  const { memory, removed } = level();
  memory.set('pet1', answer(['pet:1']), TTL_MS);
  memory.set('pet1and2', answer(['pet:1', 'pet:2']), TTL_MS);
  memory.set('list', answer(['pets']), TTL_MS);
  memory.set('pet3', answer(['pet:3']), TTL_MS);
  expect(memory.purge(['pet:1', 'pets'])).toBe(3);
  expect(memory.get('pet1')).toBeUndefined();
  expect(memory.get('pet1and2')).toBeUndefined();
  expect(memory.get('list')).toBeUndefined();
  expect(memory.get('pet3')).toBeDefined();
  // Purges are counted by the cache, not reported as evictions or expiries.
  expect(removed).toEqual([]);
  expect(memory.purge(['pet:2'])).toBe(0);
});

it('forgets the tags an answer had when another replaces it under the same key', () => {
  const { memory } = level();
  memory.set('k', answer(['pet:1']), TTL_MS);
  memory.set('k', answer(['pet:2']), TTL_MS);
  expect(memory.purge(['pet:1'])).toBe(0);
  expect(memory.purge(['pet:2'])).toBe(1);
});

it('lets an answer live its ttl, and no longer', () => {
  const { clock, memory, removed } = level();
  memory.set('short', answer(['pet:1']), 5_000);
  memory.set('long', answer(['pet:2']), TTL_MS);
  clock.advance(5_000);
  expect(memory.get('short')).toBeDefined();
  clock.advance(1);
  expect(memory.get('short')).toBeUndefined();
  expect(removed).toEqual(['expired']);
  expect(memory.get('long')).toBeDefined();
  clock.advance(TTL_MS);
  expect(memory.get('long')).toBeUndefined();
});

it('empties itself on clear, saying how many answers went', () => {
  const { memory } = level();
  memory.set('a', answer(['pet:1']), TTL_MS);
  memory.set('b', answer(['pets']), TTL_MS);
  expect(memory.clear()).toBe(2);
  expect(memory.get('a')).toBeUndefined();
  expect(memory.purge(['pet:1', 'pets'])).toBe(0);
});
