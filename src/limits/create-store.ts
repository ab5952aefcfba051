import type { RedisTopology } from '../config';
import type { Logger } from '../logger';
import { FieldLimitStore } from './field-limit.store';
import { InstanceCensus } from './instance-census';
import type { LimiterStore, StoreStatus } from './limiter-store';
import { MemoryLimiterStore } from './memory.store';
import { createRedisClient, type RedisConnection, readyWithin, redisAddress } from './redis-client';
import { RedisLimiterStore } from './redis.store';
import { ResilientLimiterStore } from './resilient.store';

export interface LimiterStores {
  /** Request limits and bans. `status()` is 'degraded' while Redis is unreachable. */
  store: LimiterStore & { status(): StoreStatus };
  /** graphql-rate-limit's store for field limits, on the same Redis connection. */
  fieldStore: FieldLimitStore;
  backend: 'memory' | 'redis';
  /** The instances sharing Redis as last seen (a quota's share from memory is the quota ÷ this). */
  instances(): number;
  /** The Redis connection and key prefix, for other state shared by instances (subscription slots). */
  redis?: { client: RedisConnection; prefix: string };
  close(): Promise<void>;
}

export interface LimiterStoreOptions {
  /** Unset: everything stays in this process (docs/contract.md §2). */
  redis?: RedisTopology;
  logger: Logger;
  /** REDIS_KEY_PREFIX: request limits and bans live under `<prefix>:rl:`, field limits under `<prefix>:fl:`. */
  prefix?: string;
  /** How long start-up waits for Redis before serving degraded; it never fails start-up. */
  readyWithinMs?: number;
  /** How often this instance tells the others through Redis that it is alive. */
  heartbeatEveryMs?: number;
  /** While Redis fails, how often it is tried again (ResilientOptions). */
  probeEveryMs?: number;
}

/**
 * The limiter's stores: memory without a Redis setting, else Redis with a memory insurance store.
 * A Redis that is down at start-up does not stop the gateway: it starts degraded and switches
 * to Redis when it answers.
 */
export async function createLimiterStore(options: LimiterStoreOptions): Promise<LimiterStores> {
  const prefix = options.prefix ?? 'petstore';
  if (!options.redis) {
    const store = new MemoryLimiterStore();
    return { store, fieldStore: new FieldLimitStore(), backend: 'memory', instances: () => 1, close: async () => {} };
  }
  const redis = createRedisClient(options.redis, options.logger);
  await readyWithin(redis, options.readyWithinMs ?? 1_000);
  const census = new InstanceCensus(redis, prefix, { heartbeatEveryMs: options.heartbeatEveryMs });
  census.start();
  const store = new ResilientLimiterStore(new RedisLimiterStore(redis, `${prefix}:rl`), new MemoryLimiterStore(), redis, {
    logger: options.logger,
    instances: () => census.instances(),
    address: redisAddress(options.redis),
    probeEveryMs: options.probeEveryMs,
  });
  const fieldStore = new FieldLimitStore({ redis, prefix: `${prefix}:fl`, useRedis: () => store.status() === 'ok' });
  return {
    store,
    fieldStore,
    backend: 'redis',
    instances: () => census.instances(),
    redis: { client: redis, prefix },
    async close() {
      census.stop();
      store.close();
      // disconnect, not quit: quit would wait for an unreachable Redis.
      redis.disconnect();
    },
  };
}
