import type { RedisConnection } from '../limits/redis-client';
import type { Tag } from './cache-tags';
import type { CachedAnswer } from './memory-level';

/**
 * Stores an answer (KEYS[1]) for ARGV[2] ms and adds it to its tags' sets (KEYS[2..]), each
 * kept at least as long as its longest-lived answer.
 * ARGV[1]: the answer as JSON.
 */
const STORE = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
for i = 2, #KEYS do
  redis.call('SADD', KEYS[i], KEYS[1])
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
end
return 1`;

/** Deletes every answer in the tags' sets (KEYS), and the sets; returns how many answers went. */
const PURGE = `
local removed = 0
for i = 1, #KEYS do
  for _, answer in ipairs(redis.call('SMEMBERS', KEYS[i])) do removed = removed + redis.call('DEL', answer) end
  redis.call('DEL', KEYS[i])
end
return removed`;

/**
 * The level shared by the instances: each answer under `<prefix>:{rc}:a:<key>`, each tag's set
 * of answers under `<prefix>:{rc}:t:<tag>`. The `{rc}` hash tag keeps them in one slot of a Redis
 * Cluster, where a script may only touch keys of one slot. Every call may fail (Redis away): the
 * caller then goes on with its own memory alone.
 */
export class RedisLevel {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async get(key: string): Promise<CachedAnswer | undefined> {
    const stored = await this.redis.get(this.answerKey(key));
    if (stored === null) return undefined;
    const { b: body, t: tags, s: startedAt } = JSON.parse(stored) as { b: string; t: Tag[]; s: number };
    return { body, tags, startedAt };
  }

  async set(key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    const value = JSON.stringify({ b: answer.body, t: answer.tags, s: answer.startedAt });
    const keys = [this.answerKey(key), ...answer.tags.map((tag) => this.tagKey(tag))];
    await this.redis.eval(STORE, keys.length, ...keys, value, Math.max(1, Math.round(ttlMs)));
  }

  async purge(tags: readonly Tag[]): Promise<number> {
    if (tags.length === 0) return 0;
    return Number(await this.redis.eval(PURGE, tags.length, ...tags.map((tag) => this.tagKey(tag))));
  }

  private answerKey(key: string): string {
    return `${this.prefix}:{rc}:a:${key}`;
  }

  private tagKey(tag: Tag): string {
    return `${this.prefix}:{rc}:t:${tag}`;
  }
}
