import type { RedisConnection } from '../limits/redis-client';
import type { Logger } from '../logger';

/**
 * Concurrent subscriptions per identity (docs/contract.md §9): a slot is taken before a
 * subscription starts and given back when it ends. `acquire` is atomic: of any number of
 * concurrent attempts, exactly as many succeed as there are free slots.
 */
export interface SubscriptionSlots {
  acquire(identity: string, slotId: string, limit: number): Promise<boolean>;
  release(identity: string, slotId: string): Promise<void>;
  active(identity: string): Promise<number>;
  close(): void;
}

/** One instance's slots. */
export class MemorySubscriptionSlots implements SubscriptionSlots {
  private readonly held = new Map<string, Set<string>>();

  async acquire(identity: string, slotId: string, limit: number): Promise<boolean> {
    const slots = this.held.get(identity) ?? new Set<string>();
    if (!slots.has(slotId) && slots.size >= limit) return false;
    slots.add(slotId);
    this.held.set(identity, slots);
    return true;
  }

  async release(identity: string, slotId: string): Promise<void> {
    const slots = this.held.get(identity);
    slots?.delete(slotId);
    if (slots?.size === 0) this.held.delete(identity);
  }

  async active(identity: string): Promise<number> {
    return this.held.get(identity)?.size ?? 0;
  }

  /** Every identity's slots held here. */
  *slots(): IterableIterator<[string, string[]]> {
    for (const [identity, slots] of this.held) yield [identity, [...slots]];
  }

  close(): void {}
}

/** How long a slot lives in Redis unless its instance renews it: a dead instance's slots free within this. */
export const SLOT_LEASE_MS = 15_000;

// Redis's own clock scores the leases, so that instances whose clocks differ agree on expiry.
const NOW = `local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)`;

/** KEYS[1] the identity's slots; ARGV slot id, limit, lease ms. 1 when the slot is held. */
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
return 0`;

/**
 * KEYS[1] the identity's slots; ARGV lease ms, then the slot ids to renew. Written whether or
 * not they are still there: a Redis that lost its data (a restart without persistence, a flush)
 * holds this instance's live slots again after one renewal.
 */
const RENEW = `${NOW}
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 0`;

const ACTIVE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`;

/**
 * Slots shared by every instance on one Redis: per identity, a sorted set of slot ids scored by
 * lease expiry. Each instance writes its own live slots back every third of the lease; a crashed
 * instance stops, and its slots are pruned once their lease ends. While Redis is unreachable,
 * slots are counted per instance, as the limiter then counts requests: every live slot of this
 * instance, those taken in Redis included, and those taken meanwhile are written to Redis when it
 * returns.
 */
export class RedisSubscriptionSlots implements SubscriptionSlots {
  /** This instance's live slots, wherever they were taken: its memory fallback and what it renews. */
  private readonly mine = new MemorySubscriptionSlots();
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly leaseMs = SLOT_LEASE_MS,
  ) {
    this.renewal = setInterval(() => void this.renew(), Math.max(100, Math.floor(leaseMs / 3)));
    this.renewal.unref();
  }

  /** Every key of an identity in one hash slot, as the limiter's keys are. */
  private keyOf(identity: string): string {
    return `${this.prefix}:sub:{${identity}}`;
  }

  async acquire(identity: string, slotId: string, limit: number): Promise<boolean> {
    let held: boolean;
    try {
      held = (await this.redis.eval(ACQUIRE, 1, this.keyOf(identity), slotId, limit, this.leaseMs)) === 1;
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'subscription slots: Redis unreachable; counting on this instance');
      return this.mine.acquire(identity, slotId, limit);
    }
    // Granted by Redis: held here too, whatever this instance alone would allow.
    if (held) await this.mine.acquire(identity, slotId, Infinity);
    return held;
  }

  async release(identity: string, slotId: string): Promise<void> {
    await this.mine.release(identity, slotId);
    await this.redis.zrem(this.keyOf(identity), slotId).catch(() => undefined);
  }

  async active(identity: string): Promise<number> {
    try {
      return Number(await this.redis.eval(ACTIVE, 1, this.keyOf(identity)));
    } catch {
      return this.mine.active(identity);
    }
  }

  private async renew(): Promise<void> {
    await Promise.all(
      [...this.mine.slots()].map(([identity, ids]) =>
        this.redis.eval(RENEW, 1, this.keyOf(identity), this.leaseMs, ...ids).catch(() => undefined),
      ),
    );
  }

  close(): void {
    clearInterval(this.renewal);
  }
}
