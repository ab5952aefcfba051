import { parseChange } from '../live/change-hub';
import type { RedisConnection } from '../limits/redis-client';
import { type Tag, tagsOfChange } from './cache-tags';
import { type CachedAnswer, MemoryLevel, type Removal } from './memory-level';
import { PurgeLog } from './purge-log';
import { RecentWriters } from './recent-writers';
import { RedisLevel, type SharedRead } from './redis-level';

/** Redis is there but did not answer: nothing it holds, not even a writer's last write, is known. */
const UNREADABLE = Symbol('unreadable');

/** Why answers were purged: a change, the change stream lost, or their safety max-age. */
export type PurgeReason = 'change' | 'stream_lost' | 'max_age' | 'evicted';

/** Where the cache reports what it does (the gateway's metrics). */
export interface CacheObserver {
  observeLookup(result: 'hit' | 'miss' | 'bypass', level: 'memory' | 'redis' | 'none'): void;
  observePurge(reason: PurgeReason, answers: number): void;
}

export interface ResponseCacheOptions {
  /** The longest any answer is kept: RESPONSE_CACHE_MAX_AGE_SECONDS. */
  maxAgeMs: number;
  /** The memory level's bound: RESPONSE_CACHE_MAX_BYTES. */
  maxBytes: number;
  /** The level shared by the instances, and whether Redis answers now. */
  redis?: { client: RedisConnection; prefix: string; usable: () => boolean };
  observer?: CacheObserver;
  now?: () => number;
}

/** What a lookup found: an answer (and where), nothing, or that this request may not use the cache. */
export type Lookup = { kind: 'hit'; answer: CachedAnswer; level: 'memory' | 'redis' } | { kind: 'miss' } | { kind: 'bypass' };

/**
 * The response cache's two levels and their purges (docs/caching.md). An answer is served only
 * while all of these hold: it is younger than the max-age; its read began after every purge of
 * its tags this instance has heard (PurgeLog), and after the change stream was last (re)joined;
 * and, for a caller that writes, after that caller's last write (RecentWriters). While the
 * change stream is down, nothing is served or kept.
 */
export class ResponseCache {
  private readonly memory: MemoryLevel;
  private readonly shared?: RedisLevel;
  private readonly log: PurgeLog;
  private readonly writers: RecentWriters;
  private readonly now: () => number;
  private listening = false;

  constructor(private readonly options: ResponseCacheOptions) {
    this.now = options.now ?? Date.now;
    const observer = options.observer;
    const removed = (why: Removal) => observer?.observePurge(why === 'expired' ? 'max_age' : why, 1);
    this.memory = new MemoryLevel(options.maxBytes, options.maxAgeMs, removed, options.now);
    this.shared = options.redis && new RedisLevel(options.redis.client, options.redis.prefix, (answer) => this.log.stands(answer));
    this.log = new PurgeLog(options.maxAgeMs, this.now);
    this.writers = new RecentWriters(options.maxAgeMs, options.redis, this.now);
  }

  get maxAgeMs(): number {
    return this.options.maxAgeMs;
  }

  /** The change stream is (again) listening: whatever was kept before may have missed a change. */
  streamJoined(): void {
    this.forgetEverything();
    this.listening = true;
  }

  /** The change stream is lost: changes may go unheard until it is back. */
  streamLost(): void {
    this.listening = false;
    this.forgetEverything();
  }

  /** One NOTIFY payload of the changes channel: purges what it changed, here and in Redis. */
  changed(payload: string): void {
    const change = parseChange(payload);
    if (change) this.purge(tagsOfChange(change));
  }

  /** The answer kept under `key` that this reader may be served, if any. `writer`: the caller's identity, when it can write. */
  async lookup(key: string, writer?: string): Promise<Lookup> {
    if (!this.listening) return this.bypass();
    const here = this.memory.get(key);
    const local = here && this.stands(here) ? here : undefined;
    if (local && writer === undefined) return this.hit(local, 'memory');
    // One round trip for all the lookup still needs: the writer's last write, and the answer if memory has none.
    const found = await this.fromRedis(local ? undefined : key, writer);
    if (found === UNREADABLE && writer !== undefined) return this.bypass();
    const shared = found === UNREADABLE ? undefined : found;
    const wroteAt = writer === undefined ? 0 : this.writers.lastWrite(writer, shared?.beside);
    if (local && local.startedAt > wroteAt) return this.hit(local, 'memory');
    const there = shared?.answer;
    if (there && this.stands(there) && there.startedAt > wroteAt) {
      this.memory.set(key, there, this.ttlLeft(there));
      return this.hit(there, 'redis');
    }
    this.options.observer?.observeLookup('miss', 'none');
    return { kind: 'miss' };
  }

  /** Keeps an answer whose read began at `answer.startedAt`, unless a change it read was heard since. */
  store(key: string, answer: CachedAnswer, ttlMs: number): void {
    if (!this.listening || !this.log.stands(answer)) return;
    const ttl = Math.min(ttlMs, this.ttlLeft(answer));
    if (ttl <= 0) return;
    this.memory.set(key, answer, ttl);
    if (this.redisUsable()) this.shared?.set(key, answer, ttl);
  }

  /** Resolves once every answer kept so far is in Redis too, for the other instances (or Redis failed). */
  settled(): Promise<void> {
    return this.shared?.settled() ?? Promise.resolve();
  }

  /** `identity` committed a write: its later reads, on any instance, see nothing read before it. */
  wrote(identity: string): Promise<void> {
    return this.writers.wrote(identity);
  }

  private purge(tags: readonly Tag[]): void {
    if (tags.length === 0) return;
    this.log.purge(tags);
    this.options.observer?.observePurge('change', this.memory.purge(tags));
    if (this.redisUsable()) this.shared?.purge(tags).catch(() => undefined);
  }

  private forgetEverything(): void {
    this.log.purgeEverything();
    this.options.observer?.observePurge('stream_lost', this.memory.clear());
  }

  /** What Redis holds for a lookup; undefined when there is no Redis level, UNREADABLE when it does not answer. */
  private async fromRedis(key: string | undefined, writer: string | undefined): Promise<SharedRead | typeof UNREADABLE | undefined> {
    if (!this.shared) return undefined;
    if (!this.redisUsable()) return UNREADABLE;
    try {
      return await this.shared.read(key, writer === undefined ? undefined : this.writers.sharedKey(writer));
    } catch {
      return UNREADABLE;
    }
  }

  /** Younger than the max-age, and read after every purge of its tags this instance heard. */
  private stands(answer: CachedAnswer): boolean {
    return answer.startedAt > this.now() - this.options.maxAgeMs && this.log.stands(answer);
  }

  private redisUsable(): boolean {
    return this.options.redis?.usable() === true;
  }

  private ttlLeft(answer: CachedAnswer): number {
    return answer.startedAt + this.options.maxAgeMs - this.now();
  }

  private hit(answer: CachedAnswer, level: 'memory' | 'redis'): Lookup {
    this.options.observer?.observeLookup('hit', level);
    return { kind: 'hit', answer, level };
  }

  private bypass(): Lookup {
    this.options.observer?.observeLookup('bypass', 'none');
    return { kind: 'bypass' };
  }
}
