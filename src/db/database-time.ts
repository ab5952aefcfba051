import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../common/bounded-cache';
import { dropWhere } from '../common/drop-where';

/**
 * Buckets held at most. Past it the least recently charged is forgotten, as a full one would be:
 * an identity spending now is charged at every statement, so what goes is an idle one.
 */
export const MAX_DATABASE_TIME_BUCKETS = 20_000;

/**
 * Each identity's database time (docs/contract.md §5), on the model of GitHub's secondary limit of
 * CPU time per minute: a bucket holding a minute's allowance of statement time, spent by the time
 * each statement holds its connection and refilled evenly over a minute. An identity may start
 * statements while its bucket holds anything; one statement may overdraw it (it cannot know its
 * cost before it runs), and the identity then waits until the debt is paid back.
 *
 * Kept in this instance's memory: N instances give an identity up to N allowances.
 */
export class DatabaseTime {
  private readonly buckets: LRUCache<string, { balanceMs: number; at: number }>;
  /** Full buckets are forgotten when the map grows past this, so idle identities cost nothing. */
  private sweepAt = 1_024;

  constructor(
    /** Milliseconds on a monotonic clock. */
    private readonly now: () => number = () => performance.now(),
    private readonly windowMs = 60_000,
    maxBuckets = MAX_DATABASE_TIME_BUCKETS,
  ) {
    this.buckets = boundedCache(maxBuckets);
  }

  /**
   * Milliseconds until `identity`, allowed `allowanceMs` a minute, may start a statement again:
   * 0 while its bucket holds time.
   */
  waitMs(identity: string, allowanceMs: number): number {
    const balance = this.balanceOf(identity, allowanceMs);
    return balance > 0 ? 0 : Math.ceil((-balance * this.windowMs) / allowanceMs) + 1;
  }

  /** Charges `identity` for `spentMs` of statement time. */
  spend(identity: string, allowanceMs: number, spentMs: number): void {
    const balanceMs = this.balanceOf(identity, allowanceMs) - spentMs;
    this.buckets.set(identity, { balanceMs, at: this.now() });
    if (this.buckets.size > this.sweepAt) this.sweep();
  }

  /** What `identity` has left now, refilled since its last charge, at most a full allowance. */
  balanceOf(identity: string, allowanceMs: number): number {
    const bucket = this.buckets.get(identity);
    if (!bucket) return allowanceMs;
    const refilled = ((this.now() - bucket.at) * allowanceMs) / this.windowMs;
    return Math.min(allowanceMs, bucket.balanceMs + refilled);
  }

  /**
   * Drops buckets idle for two windows: refilled by two allowances, they are full (a full bucket
   * is the same as none) unless a debt outgrew an allowance, which is then forgiven.
   */
  private sweep(): void {
    const now = this.now();
    dropWhere(this.buckets, (bucket) => now - bucket.at >= this.windowMs * 2);
    this.sweepAt = Math.max(1_024, this.buckets.size * 2);
  }

  /** Identities with a bucket kept (for tests of the sweep). */
  get size(): number {
    return this.buckets.size;
  }
}
