import type { Logger } from '../logger';
import { FieldLimitStore } from './field-limit.store';
import type { LimiterStore, StoreStatus } from './limiter-store';
import { MemoryLimiterStore } from './memory.store';
import { createRedisClient, readyWithin } from './redis-client';
import { RedisLimiterStore } from './redis.store';
import { ResilientLimiterStore } from './resilient.store';

export interface LimiterStores {
  /** Request limits and bans. `status()` is 'degraded' while Redis is unreachable. */
  store: LimiterStore & { status(): StoreStatus };
  /** graphql-rate-limit's store for field limits, on the same Redis connection. */
  fieldStore: FieldLimitStore;
  backend: 'memory' | 'redis';
  close(): Promise<void>;
}

export interface LimiterStoreOptions {
  /** Unset: everything stays in this process (API.md §2). */
  redisUrl?: string;
  logger: Logger;
  /** Key prefix in Redis; field limits use `<prefix>f`. */
  prefix?: string;
  /** How long start-up waits for Redis before serving degraded; it never fails start-up. */
  readyWithinMs?: number;
}

/**
 * The limiter's stores: memory without REDIS_URL, else Redis with a memory insurance store.
 * A Redis that is down at start-up does not stop the gateway: it starts degraded and switches
 * to Redis when it answers.
 */
export async function createLimiterStore(options: LimiterStoreOptions): Promise<LimiterStores> {
  const prefix = options.prefix ?? 'rl';
  if (!options.redisUrl) {
    const store = new MemoryLimiterStore();
    return { store, fieldStore: new FieldLimitStore(), backend: 'memory', close: async () => {} };
  }
  const redis = createRedisClient(options.redisUrl, options.logger);
  await readyWithin(redis, options.readyWithinMs ?? 1_000);
  const store = new ResilientLimiterStore(new RedisLimiterStore(redis, prefix), new MemoryLimiterStore(), redis, {
    logger: options.logger,
  });
  const fieldStore = new FieldLimitStore({ redis, prefix: `${prefix}f`, useRedis: () => store.status() === 'ok' });
  return {
    store,
    fieldStore,
    backend: 'redis',
    async close() {
      store.close();
      // disconnect, not quit: quit would wait for an unreachable Redis.
      redis.disconnect();
    },
  };
}
