import type { LRUCache } from 'lru-cache';

/** Deletes every entry whose value is `stale` (collected first: the cache is not changed while walked). */
export function dropWhere<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(cache: LRUCache<K, V>, stale: (value: V) => boolean): void {
  const dropped = [...cache.entries()].filter(([, value]) => stale(value));
  for (const [key] of dropped) cache.delete(key);
}
