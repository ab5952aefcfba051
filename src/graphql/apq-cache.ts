import type { KeyValueCache, KeyValueCacheSetOptions } from '@apollo/utils.keyvaluecache';
import type { RedisConnection } from '../limits/redis-client';
import type { Logger } from '../logger';

/**
 * How long a registered persisted query is kept (seconds). A client whose hash has expired sends
 * the document once more, one extra round trip; the bound keeps what clients register from
 * piling up in Redis.
 */
export const APQ_TTL_SECONDS = 24 * 60 * 60;

/**
 * Apollo Server's KeyValueCache over the gateway's ioredis client (one Redis, Sentinel or
 * Cluster alike: every command touches one key), so that a query registered through one instance
 * is found by every instance. Apollo prefixes its keys with `apq:`; they live under
 * `<REDIS_KEY_PREFIX>:apq:<sha256>`.
 *
 * Redis being down must not fail a request: Apollo does not catch a failed read, so a failed
 * read is a miss (the client then sends its document) and a failed write is dropped.
 */
export class RedisKeyValueCache implements KeyValueCache<string> {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  async get(key: string): Promise<string | undefined> {
    try {
      return (await this.redis.get(this.prefix + key)) ?? undefined;
    } catch (error) {
      this.logger.debug({ err: (error as Error).message }, 'persisted query read failed; treated as a miss');
      return undefined;
    }
  }

  async set(key: string, value: string, options?: KeyValueCacheSetOptions): Promise<void> {
    // null would mean "forever"; every entry gets an expiry all the same.
    const ttl = Math.max(1, Math.ceil(options?.ttl ?? APQ_TTL_SECONDS));
    try {
      await this.redis.set(this.prefix + key, value, 'EX', ttl);
    } catch (error) {
      this.logger.debug({ err: (error as Error).message }, 'persisted query write failed');
    }
  }

  async delete(key: string): Promise<boolean> {
    try {
      return (await this.redis.del(this.prefix + key)) > 0;
    } catch {
      return false;
    }
  }
}
