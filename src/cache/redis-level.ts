import type { RedisConnection } from '../limits/redis-client';
import type { Tag } from './cache-tags';
import type { CachedAnswer } from './memory-level';

/**
 * Stores answers, each for its own ms, and adds each to its tags' sets, each set kept at least
 * as long as its longest-lived answer. ARGV[1]: how many answers; then for each, its JSON, its
 * ms and its number of tags. KEYS: for each answer, its key then its tags' keys.
 */
const STORE = `
local k = 1
for i = 0, tonumber(ARGV[1]) - 1 do
  local answer, ttl, tags = KEYS[k], tonumber(ARGV[3 + 3 * i]), tonumber(ARGV[4 + 3 * i])
  redis.call('SET', answer, ARGV[2 + 3 * i], 'PX', ttl)
  for t = k + 1, k + tags do
    redis.call('SADD', KEYS[t], answer)
    if redis.call('PTTL', KEYS[t]) < ttl then redis.call('PEXPIRE', KEYS[t], ttl) end
  end
  k = k + 1 + tags
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

/** The commands defineCommand adds; ioredis runs them by EVALSHA, loading the script on NOSCRIPT. */
interface CacheCommands {
  responseCacheStore(numKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>;
  responseCachePurge(numKeys: number, ...keys: string[]): Promise<number>;
}

/** What one read of the level found: the answer kept under a key, and a value kept beside it (in the `{rc}` slot). */
export interface SharedRead {
  answer?: CachedAnswer;
  beside: string | null;
}

interface PendingStore {
  key: string;
  answer: CachedAnswer;
  ttlMs: number;
}

/**
 * The level shared by the instances: each answer under `<prefix>:{rc}:a:<key>`, each tag's set
 * of answers under `<prefix>:{rc}:t:<tag>`. The `{rc}` hash tag keeps them in one slot of a Redis
 * Cluster, where a script or an MGET may only touch keys of one slot. Every call may fail (Redis
 * away): the caller then goes on with its own memory alone.
 *
 * A lookup asks for all it needs in one command. The answers kept in one turn of the event loop
 * go to Redis at the end of the turn in one script run: nobody awaits them, and under load each
 * command costs a write and a read on the socket, more than the command itself.
 */
export class RedisLevel {
  private readonly commands: CacheCommands;
  private pending: PendingStore[] = [];
  private sent: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    /** Whether an answer about to be sent may still be kept (no purge of its tags heard since). */
    private readonly stillStands: (answer: CachedAnswer) => boolean,
  ) {
    if (!('responseCacheStore' in redis)) {
      redis.defineCommand('responseCacheStore', { lua: STORE });
      redis.defineCommand('responseCachePurge', { lua: PURGE });
      // Loaded now, the first answers kept are not sent twice (NOSCRIPT, then the script's text),
      // behind a lookup that another instance sends meanwhile.
      for (const script of [STORE, PURGE]) redis.script('LOAD', script).catch(() => undefined);
    }
    this.commands = redis as unknown as CacheCommands;
  }

  /** In one command: the answer under `key` (none asked when undefined) and the value under `beside`. */
  async read(key: string | undefined, beside: string | undefined): Promise<SharedRead> {
    if (key === undefined) return { beside: beside === undefined ? null : await this.redis.get(beside) };
    if (beside === undefined) return { answer: parseAnswer(await this.redis.get(this.answerKey(key))), beside: null };
    const [stored, value] = await this.redis.mget(this.answerKey(key), beside);
    return { answer: parseAnswer(stored), beside: value };
  }

  /** Keeps an answer for `ttlMs`, sent with the others kept in this turn. */
  set(key: string, answer: CachedAnswer, ttlMs: number): void {
    if (this.pending.length === 0) this.sent = new Promise((resolve) => setImmediate(() => this.flush().then(resolve)));
    this.pending.push({ key, answer, ttlMs });
  }

  /** Resolves once every answer kept so far is in Redis (or Redis failed to take it). */
  settled(): Promise<void> {
    return this.sent;
  }

  async purge(tags: readonly Tag[]): Promise<number> {
    if (tags.length === 0) return 0;
    return Number(await this.commands.responseCachePurge(tags.length, ...tags.map((tag) => this.tagKey(tag))));
  }

  private async flush(): Promise<void> {
    const stores = this.pending.filter(({ answer }) => this.stillStands(answer));
    this.pending = [];
    if (stores.length === 0) return;
    const keys: string[] = [];
    const args: (string | number)[] = [stores.length];
    for (const { key, answer, ttlMs } of stores) {
      keys.push(this.answerKey(key));
      for (const tag of answer.tags) keys.push(this.tagKey(tag));
      args.push(JSON.stringify({ b: answer.body, t: answer.tags, s: answer.startedAt }), Math.max(1, Math.round(ttlMs)), answer.tags.length);
    }
    await this.commands.responseCacheStore(keys.length, ...keys, ...args).catch(() => undefined);
  }

  private answerKey(key: string): string {
    return `${this.prefix}:{rc}:a:${key}`;
  }

  private tagKey(tag: Tag): string {
    return `${this.prefix}:{rc}:t:${tag}`;
  }
}

function parseAnswer(stored: string | null): CachedAnswer | undefined {
  if (stored === null) return undefined;
  const { b: body, t: tags, s: startedAt } = JSON.parse(stored) as { b: string; t: Tag[]; s: number };
  return { body, tags, startedAt };
}
