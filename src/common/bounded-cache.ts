import { LRUCache } from 'lru-cache';

type Options<K extends NonNullable<unknown>, V extends NonNullable<unknown>> = Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'>;

/**
 * A least-recently-used cache of at most `entries` entries whose memory grows with what it holds.
 * Given `max`, lru-cache allocates its index for that many entries when it is made (about 30 bytes
 * an entry: 2.8 MB for 100,000), held from start-up whether any client ever fills it or not. Bounded
 * instead by `maxSize` with every entry counted as one, it evicts the same least recently used entry
 * at the same count, and its index grows as entries arrive.
 */
export function boundedCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(entries: number, options: Options<K, V> = {}): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: oneEntry });
}

const oneEntry = () => 1;
