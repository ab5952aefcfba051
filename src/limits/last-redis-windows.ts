import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../common/bounded-cache';
import type { WindowName, WindowState } from './window';

interface Seen {
  count: number;
  resetAt: number;
}

/**
 * Identities whose last Redis windows are kept (about 500 bytes each with a key's identity).
 * Past it the one Redis answered least recently is forgotten: should Redis then fail, that
 * identity's fallback starts from the whole share, as one never seen would.
 */
export const MAX_REMEMBERED_IDENTITIES = 50_000;

/**
 * The window states Redis last answered on this instance, per identity: what Redis had already
 * counted when it stopped answering. Replies on one connection come back in the order Redis ran
 * the commands (an identity's keys share a slot, hence a node, on a cluster too), so the last
 * answer is the latest count.
 */
export class LastRedisWindows {
  private readonly seen: LRUCache<string, Partial<Record<WindowName, Seen>>>;

  constructor(maxIdentities = MAX_REMEMBERED_IDENTITIES) {
    this.seen = boundedCache(maxIdentities);
  }

  /** Identities held. */
  get size(): number {
    return this.seen.size;
  }

  remember(identity: string, windows: readonly WindowState[]): void {
    const held = this.seen.get(identity);
    const entry = held ?? {};
    for (const window of windows) {
      const count = window.limit - window.remaining;
      const seen = entry[window.name];
      if (seen) {
        seen.count = count;
        seen.resetAt = window.resetAt;
      } else {
        entry[window.name] = { count, resetAt: window.resetAt };
      }
    }
    if (!held) this.seen.set(identity, entry);
  }

  /** What Redis had counted in the identity's window that is still running at `now`; 0 when none is. */
  counted(identity: string, window: WindowName, now: number): number {
    const seen = this.seen.peek(identity)?.[window];
    return seen !== undefined && seen.resetAt > now ? seen.count : 0;
  }
}
