import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { boundedCache } from '../common/bounded-cache';
import { dropWhere } from '../common/drop-where';
import type { Identity, Store } from 'graphql-rate-limit';
import type { RedisConnection } from './redis-client';

export interface FieldLimitStoreOptions {
  /** Unset: timestamps live in this process only. */
  redis?: RedisConnection;
  /** Distinguishes deployments (or test runs) sharing one Redis: `<REDIS_KEY_PREFIX>:fl`. */
  prefix?: string;
  /** False while the limiter store is degraded: Redis is then not even tried. */
  useRedis?: () => boolean;
}

const SWEEP_EVERY_MS = 60_000;
/**
 * (identity, field) lists held in memory at most; past it the least recently used is forgotten,
 * and that caller's calls of that field start a fresh window.
 */
export const MAX_MEMORY_FIELD_LISTS = 20_000;
/**
 * A lock outlives a holder that died holding it by this much at most. A read and a write take a
 * few milliseconds; a holder stalled for longer lets the next caller in, which may then admit
 * one call too many: the only way the limit can be overshot.
 */
export const LOCK_MS = 1_000;
/** How long a caller waits for the lock before going ahead without it (a stuck lock expires first). */
const LOCK_WAIT_MS = 2 * LOCK_MS;
/** Deletes the lock only if this caller still holds it: an expired lock may be another's by now. */
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
/** graphql-rate-limit's own default window, should a caller not pass one. */
const DEFAULT_WINDOW_MS = 60_000;

/**
 * graphql-rate-limit's Store: the call timestamps of one field for one caller. In Redis they are
 * a JSON array under `petstore:fl:{identity}:field`, expiring with the newest timestamp's window,
 * and in this process's memory too; a failing or slow Redis falls back to memory, so a field
 * limit never fails a request, and what was admitted before or during the fallback still counts.
 *
 * The library reads, then writes: two instances could interleave between the two and both admit
 * the last call. `exclusive` therefore holds a short Redis lock per (identity, field) around each
 * read-then-write (SET NX PX with a token of its own, released by a script that checks the
 * token; the lock shares the list's hash tag, hence its cluster slot), which makes the limit exact across instances; within one instance field-limiter.ts
 * already runs the calls one at a time.
 */
export class FieldLimitStore implements Store {
  private readonly memory = boundedCache<string, { timestamps: readonly number[]; expiresAt: number }>(MAX_MEMORY_FIELD_LISTS);
  private lastSweep = -Infinity;
  private readonly prefix: string;

  constructor(private readonly options: FieldLimitStoreOptions = {}) {
    this.prefix = options.prefix ?? 'rlf';
  }

  async getForIdentity(identity: Identity): Promise<readonly number[]> {
    const key = this.key(identity);
    const remembered = this.remembered(key);
    const redis = this.usableRedis();
    if (redis) {
      try {
        const stored = await redis.get(key);
        // What this instance admitted while Redis was out of use is in its memory alone: both
        // lists together, so that moving between the two never forgets a call admitted.
        return joined(stored ? (JSON.parse(stored) as number[]) : [], remembered);
      } catch {
        // Answered from memory below; the limiter store reports the outage.
      }
    }
    return remembered;
  }

  async setForIdentity(identity: Identity, timestamps: readonly number[], windowMs = DEFAULT_WINDOW_MS): Promise<void> {
    const now = Date.now();
    // The list is useful until its newest call leaves the window.
    const ttl = timestamps.length === 0 ? 0 : Math.max(...timestamps) + windowMs - now;
    const key = this.key(identity);
    // Always kept in memory too: should Redis go out of use, this instance's own calls still count.
    this.sweep(now);
    if (ttl > 0) this.memory.set(key, { timestamps: [...timestamps], expiresAt: now + ttl });
    else this.memory.delete(key);
    const redis = this.usableRedis();
    if (!redis) return;
    try {
      if (ttl > 0) await redis.set(key, JSON.stringify(timestamps), 'PX', Math.ceil(ttl));
      else await redis.del(key);
    } catch {
      // Kept in memory above.
    }
  }

  private remembered(key: string): readonly number[] {
    const entry = this.memory.get(key);
    return entry && entry.expiresAt > Date.now() ? entry.timestamps : [];
  }

  /**
   * Runs `task` (one read-then-write of `field` for `identity`) while holding the Redis lock for
   * them. Without a usable Redis there is nothing to share, and the task runs at once; a Redis
   * that fails while locking is left to getForIdentity's fallback to memory.
   */
  async exclusive<T>(identity: string, field: string, task: () => Promise<T>): Promise<T> {
    const redis = this.usableRedis();
    if (!redis) return task();
    const lock = `${this.prefix}:{${identity}}:${field}:lock`;
    const token = randomBytes(12).toString('base64url');
    let held = false;
    try {
      const deadline = Date.now() + LOCK_WAIT_MS;
      held = (await redis.set(lock, token, 'PX', LOCK_MS, 'NX')) === 'OK';
      while (!held && Date.now() < deadline) {
        await sleep(2 + Math.random() * 3);
        held = (await redis.set(lock, token, 'PX', LOCK_MS, 'NX')) === 'OK';
      }
    } catch {
      // Redis is failing: the task falls back to memory on its own.
    }
    try {
      return await task();
    } finally {
      if (held) await redis.eval(RELEASE_SCRIPT, 1, lock, token).catch(() => undefined);
    }
  }

  private usableRedis(): RedisConnection | undefined {
    return this.options.useRedis?.() === false ? undefined : this.options.redis;
  }

  private key(identity: Identity): string {
    return `${this.prefix}:{${identity.contextIdentity}}:${identity.fieldIdentity}`;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    dropWhere(this.memory, (entry) => entry.expiresAt <= now);
  }
}

/**
 * Every call in either list, once: memory holds a copy of the Redis list this instance last wrote
 * (calls of other instances since then are in Redis alone), plus the calls it admitted from
 * memory. A timestamp appearing n times in one list and m in the other is n ∨ m calls.
 */
function joined(shared: readonly number[], remembered: readonly number[]): readonly number[] {
  const counts = new Map<number, number>();
  for (const at of shared) counts.set(at, (counts.get(at) ?? 0) + 1);
  const onlyRemembered = remembered.filter((at) => {
    const left = counts.get(at) ?? 0;
    if (left > 0) counts.set(at, left - 1);
    return left === 0;
  });
  return onlyRemembered.length === 0 ? shared : [...shared, ...onlyRemembered];
}
