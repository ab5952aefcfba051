import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../logger';

/**
 * Options for the limiter's Redis client. An outage must cost a request a fraction of a second
 * at most: commands fail at once while disconnected (no offline queue, no retries) and after
 * 250 ms when Redis hangs, and the client keeps reconnecting in the background, forever.
 */
export const LIMITER_REDIS_OPTIONS: RedisOptions = {
  // Commands of concurrent requests go out in one write: fewer system calls per request.
  enableAutoPipelining: true,
  connectTimeout: 250,
  commandTimeout: 250,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  retryStrategy: (attempt) => Math.min(attempt * 250, 1_000),
};

export function createRedisClient(url: string, logger: Logger, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, { ...LIMITER_REDIS_OPTIONS, ...options });
  // Without a listener ioredis prints every failed reconnection; the outage itself is logged
  // once, by the resilient store.
  redis.on('error', (error: Error) => logger.debug({ err: error.message }, 'Redis connection error'));
  return redis;
}

/** Resolves when the client is ready, or after `withinMs` (the caller then starts degraded). */
export function readyWithin(redis: Redis, withinMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, withinMs);
    redis.once('ready', done);
  });
}
