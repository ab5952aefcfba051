import type { Identity, Store } from 'graphql-rate-limit';
import type { Redis } from 'ioredis';

export interface FieldLimitStoreOptions {
  /** Unset: timestamps live in this process only. */
  redis?: Redis;
  /** Distinguishes deployments (or test runs) sharing one Redis. */
  prefix?: string;
  /** False while the limiter store is degraded: Redis is then not even tried. */
  useRedis?: () => boolean;
}

const SWEEP_EVERY_MS = 60_000;
/** graphql-rate-limit's own default window, should a caller not pass one. */
const DEFAULT_WINDOW_MS = 60_000;

/**
 * graphql-rate-limit's Store: the call timestamps of one field for one caller. In Redis they are
 * a JSON array under `rlf:{identity}:field`, expiring with the newest timestamp's window; a
 * failing Redis falls back to memory, so a field limit never fails a request.
 *
 * The library reads, then writes: two instances may interleave between the two and both admit
 * the last call. Within one instance field-limiter.ts serialises the calls, so the limit is
 * exact per instance and approximate across instances.
 */
export class FieldLimitStore implements Store {
  private readonly memory = new Map<string, { timestamps: readonly number[]; expiresAt: number }>();
  private lastSweep = -Infinity;
  private readonly prefix: string;

  constructor(private readonly options: FieldLimitStoreOptions = {}) {
    this.prefix = options.prefix ?? 'rlf';
  }

  async getForIdentity(identity: Identity): Promise<readonly number[]> {
    const redis = this.usableRedis();
    if (redis) {
      try {
        const stored = await redis.get(this.key(identity));
        return stored ? (JSON.parse(stored) as number[]) : [];
      } catch {
        // Answered from memory below; the limiter store reports the outage.
      }
    }
    const entry = this.memory.get(this.key(identity));
    return entry && entry.expiresAt > Date.now() ? entry.timestamps : [];
  }

  async setForIdentity(identity: Identity, timestamps: readonly number[], windowMs = DEFAULT_WINDOW_MS): Promise<void> {
    const now = Date.now();
    // The list is useful until its newest call leaves the window.
    const ttl = timestamps.length === 0 ? 0 : Math.max(...timestamps) + windowMs - now;
    const redis = this.usableRedis();
    if (redis) {
      try {
        if (ttl > 0) await redis.set(this.key(identity), JSON.stringify(timestamps), 'PX', Math.ceil(ttl));
        else await redis.del(this.key(identity));
        return;
      } catch {
        // Kept in memory below.
      }
    }
    this.sweep(now);
    if (ttl > 0) this.memory.set(this.key(identity), { timestamps: [...timestamps], expiresAt: now + ttl });
    else this.memory.delete(this.key(identity));
  }

  private usableRedis(): Redis | undefined {
    return this.options.useRedis?.() === false ? undefined : this.options.redis;
  }

  private key(identity: Identity): string {
    return `${this.prefix}:{${identity.contextIdentity}}:${identity.fieldIdentity}`;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [key, entry] of this.memory) if (entry.expiresAt <= now) this.memory.delete(key);
  }
}
