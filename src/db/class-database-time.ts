import type { Tier } from '../common/fair-turns';
import type { RequestRefusal } from '../errors';
import { unpaidDatabaseTimeSpent } from '../refusals';

/**
 * The database time a class of callers may use together on an instance (docs/contract.md §5,
 * "Database time of the unpaid classes"): a bucket refilled at `msPerSecond` of statement time a
 * second, holding at most one second's worth, spent by the time each statement of the class holds
 * its connection. A statement may start while the bucket holds anything; one may overdraw it (its
 * cost is known only once it has run), and the class then waits until the debt is paid back.
 *
 * A statement's time on its connection is at least the database's CPU time for it, so this bounds
 * the cores a crowd of many identities can keep busy, each within its own limits: what the pool's
 * class shares, which count connections, cannot do when each connection runs a scan.
 */
export class ClassDatabaseTime {
  private balanceMs: number;
  private at: number;

  constructor(
    /** Statement time a second the class may use (ms); at most one second's worth is kept. */
    readonly msPerSecond: number,
    /** Milliseconds on a monotonic clock. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.balanceMs = msPerSecond;
    this.at = now();
  }

  /** Milliseconds until the class may start a statement again: 0 while its bucket holds time. */
  waitMs(): number {
    const balance = this.refill();
    return balance > 0 ? 0 : Math.ceil((-balance * 1000) / this.msPerSecond) + 1;
  }

  /** Charges the class for `ms` one of its statements held its connection. */
  spend(ms: number): void {
    this.balanceMs = this.refill() - ms;
  }

  private refill(): number {
    const now = this.now();
    this.balanceMs = Math.min(this.msPerSecond, this.balanceMs + ((now - this.at) * this.msPerSecond) / 1000);
    this.at = now;
    return this.balanceMs;
  }
}

/**
 * The unpaid classes' buckets: FREE keys and anonymous clients together, and anonymous clients
 * alone within that (`anonymousShare` of it, ANONYMOUS_DATABASE.timeShare), so that a crowd of
 * addresses cannot spend what FREE keys would use. A statement of a class checks and charges
 * every bucket it is in.
 */
export class UnpaidDatabaseTime {
  readonly unpaid: ClassDatabaseTime;
  readonly anonymous: ClassDatabaseTime;

  constructor(msPerSecond: number, anonymousShare: number, now?: () => number) {
    this.unpaid = new ClassDatabaseTime(msPerSecond, now);
    this.anonymous = new ClassDatabaseTime(Math.max(1, msPerSecond * anonymousShare), now);
  }

  /** Statements the unpaid classes run at once: the cores their time a second keeps busy, at least one. */
  get statementsAtOnce(): number {
    return Math.max(1, Math.ceil(this.unpaid.msPerSecond / 1000));
  }

  /** The buckets a claimant of `tier` draws on; none for the paying class. */
  bucketsOf(tier: Tier): ClassDatabaseTime[] {
    if (tier === 'paying') return [];
    return tier === 'free' ? [this.unpaid] : [this.unpaid, this.anonymous];
  }

  /** The refusal of a request of `tier` while its classes' time is spent; undefined while it holds time. */
  refusalWhileSpent(tier: Tier): RequestRefusal | undefined {
    const buckets = this.bucketsOf(tier);
    const { waitMs, binding } = classWaitOf(buckets);
    return waitMs > 0 ? classTimeSpent(buckets, binding, waitMs) : undefined;
  }
}

/** The longest wait among a request's class buckets for time to start a statement, and the bucket it is for. */
export function classWaitOf(buckets: ClassDatabaseTime[]): { waitMs: number; binding: ClassDatabaseTime } {
  let waitMs = 0;
  let binding = buckets[0];
  for (const bucket of buckets) {
    const ms = bucket.waitMs();
    if (ms > waitMs) [waitMs, binding] = [ms, bucket];
  }
  return { waitMs, binding };
}

/** The 503 of a request whose classes' time (`buckets`, the unpaid class's first) is spent, `binding` the longest wait. */
export function classTimeSpent(buckets: ClassDatabaseTime[], binding: ClassDatabaseTime, waitMs: number): RequestRefusal {
  return unpaidDatabaseTimeSpent(binding === buckets[0] ? 'unpaid' : 'anonymous', binding.msPerSecond, waitMs);
}
