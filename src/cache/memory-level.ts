import { LRUCache } from 'lru-cache';
import type { Tag } from './cache-tags';

/** One kept answer: the `data` of a GraphQL result as JSON, what it read, and when its read began. */
export interface CachedAnswer {
  body: string;
  tags: readonly Tag[];
  startedAt: number;
}

/** Why an answer left the memory level on its own (a purge is counted by whoever asked for it). */
export type Removal = 'evicted' | 'expired';

/**
 * This process's level: at most `maxBytes` of answers (least recently used go first), each for at
 * most `ttlMs`, indexed by tag so that a purge finds its answers without a scan.
 */
export class MemoryLevel {
  private readonly answers: LRUCache<string, CachedAnswer>;
  private readonly byTag = new Map<Tag, Set<string>>();

  /** `now`: the clock ages are read on, each time (by default lru-cache's own, read at most once a millisecond). */
  constructor(maxBytes: number, ttlMs: number, onRemoved: (why: Removal) => void, now?: () => number) {
    this.answers = new LRUCache<string, CachedAnswer>({
      maxSize: maxBytes,
      ...(now && { perf: { now }, ttlResolution: 0 }),
      // UTF-16 text, plus its tags and the entry's own overhead.
      sizeCalculation: (answer, key) => 2 * (answer.body.length + key.length) + answer.tags.reduce((sum, tag) => sum + 2 * tag.length + 48, 200),
      ttl: ttlMs,
      dispose: (answer, key, reason) => {
        this.unindex(key, answer.tags);
        if (reason === 'evict') onRemoved('evicted');
        else if (reason === 'expire') onRemoved('expired');
      },
    });
  }

  get(key: string): CachedAnswer | undefined {
    return this.answers.get(key);
  }

  set(key: string, answer: CachedAnswer, ttlMs: number): void {
    this.answers.set(key, answer, { ttl: ttlMs });
    // An answer larger than the whole bound is not kept: nothing to index.
    if (this.answers.peek(key) !== answer) return;
    for (const tag of answer.tags) {
      let keys = this.byTag.get(tag);
      if (!keys) this.byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Removes every answer carrying one of `tags`; how many went. */
  purge(tags: readonly Tag[]): number {
    let removed = 0;
    for (const tag of tags) {
      const keys = this.byTag.get(tag);
      if (!keys) continue;
      for (const key of [...keys]) if (this.answers.delete(key)) removed++;
    }
    return removed;
  }

  clear(): number {
    const size = this.answers.size;
    this.answers.clear();
    this.byTag.clear();
    return size;
  }

  private unindex(key: string, tags: readonly Tag[]): void {
    for (const tag of tags) {
      const keys = this.byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.byTag.delete(tag);
    }
  }
}
