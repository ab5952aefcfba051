import type { Tag } from './cache-tags';

/** Past this many tags (or purges) remembered, the log forgets them all and counts everything as purged (a bulk write). */
export const MAX_REMEMBERED_TAGS = 100_000;

/** When a cached answer's read began, and what it read. */
export interface Stamped {
  startedAt: number;
  tags: readonly Tag[];
}

/**
 * When this instance last heard each tag purged, for as long as an answer may live. An answer
 * stands only if its read began after every purge of every tag it carries: so an answer whose
 * read raced a change (computed before the change, stored after its purge) is never kept, and
 * an answer another instance stored in Redis before this one heard a change is not served here.
 */
export class PurgeLog {
  private readonly lastPurged = new Map<Tag, number>();
  /** Purges in the order heard, to forget them once no live answer can predate them. */
  private readonly heard: { tag: Tag; at: number }[] = [];
  private oldest = 0;
  private everythingAt: number;

  constructor(
    private readonly horizonMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.everythingAt = now();
  }

  purge(tags: readonly Tag[]): void {
    const at = this.now();
    this.forgetBefore(at - this.horizonMs);
    // Distinct tags, and purges heard, alike: a storm of writes to a few rows is bounded too.
    if (this.lastPurged.size + tags.length > MAX_REMEMBERED_TAGS || this.heard.length - this.oldest + tags.length > MAX_REMEMBERED_TAGS) return this.purgeEverything();
    for (const tag of tags) {
      this.lastPurged.set(tag, at);
      this.heard.push({ tag, at });
    }
  }

  /** Nothing read before now stands: the change stream was lost, or too much changed at once. */
  purgeEverything(): void {
    this.everythingAt = this.now();
    this.lastPurged.clear();
    this.heard.length = 0;
    this.oldest = 0;
  }

  /** Whether an answer may still be served, as far as this instance has heard of changes. */
  stands({ startedAt, tags }: Stamped): boolean {
    if (startedAt <= this.everythingAt) return false;
    for (const tag of tags) {
      const at = this.lastPurged.get(tag);
      if (at !== undefined && at >= startedAt) return false;
    }
    return true;
  }

  private forgetBefore(cutoff: number): void {
    while (this.oldest < this.heard.length && this.heard[this.oldest].at < cutoff) {
      const { tag, at } = this.heard[this.oldest++];
      if (this.lastPurged.get(tag) === at) this.lastPurged.delete(tag);
    }
    if (this.oldest > 1_024 && this.oldest * 2 > this.heard.length) {
      this.heard.splice(0, this.oldest);
      this.oldest = 0;
    }
  }
}
