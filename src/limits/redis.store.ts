import type { BanPolicy, LimiterStore, StoreOutcome } from './limiter-store';
import { BAN_SCRIPT, HIT_SCRIPT, PEEK_SCRIPT, REFUND_SCRIPT } from './redis.scripts';
import type { RedisConnection } from './redis-client';
import { type WindowSpec, type WindowState, windowState } from './window';

type Reply = (string | number)[];

/** The commands defineCommand adds; ioredis runs them by EVALSHA, loading the script on NOSCRIPT. */
interface LimiterCommands {
  rateLimitHit(numKeys: number, ...keysAndArgs: (string | number)[]): Promise<Reply>;
  rateLimitPeek(numKeys: number, ...keys: string[]): Promise<number[]>;
  rateLimitRefund(numKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>;
  rateLimitBan(numKeys: number, key: string, now: number, untilMs: number): Promise<number>;
}

/**
 * Limiter state in Redis, shared by every gateway instance. Each hit is one script run
 * (redis.scripts.ts). An identity's keys share the hash tag `{identity}`, so they live in one
 * cluster slot, as a multi-key script requires.
 */
export class RedisLimiterStore implements LimiterStore {
  private readonly commands: LimiterCommands;

  constructor(
    private readonly redis: RedisConnection,
    /** Distinguishes deployments (or test runs) sharing one Redis: `<REDIS_KEY_PREFIX>:rl`. */
    private readonly prefix = 'rl',
  ) {
    if (!('rateLimitHit' in redis)) {
      redis.defineCommand('rateLimitHit', { lua: HIT_SCRIPT });
      redis.defineCommand('rateLimitPeek', { lua: PEEK_SCRIPT, readOnly: true });
      redis.defineCommand('rateLimitBan', { lua: BAN_SCRIPT });
      redis.defineCommand('rateLimitRefund', { lua: REFUND_SCRIPT });
    }
    this.commands = redis as unknown as LimiterCommands;
  }

  async hit(identity: string, specs: WindowSpec[], now: number, ban: BanPolicy, sentAt = now): Promise<StoreOutcome> {
    const at = Math.trunc(now);
    // One array of what the script takes (numKeys, keys, then args), built without spreads.
    const tagged = this.tagged(identity);
    const command: (string | number)[] = [specs.length + 2];
    for (const spec of specs) command.push(tagged + spec.name);
    command.push(tagged + 'refusals', tagged + 'ban', at, ban.threshold, Math.trunc(ban.durationMs));
    for (const spec of specs) command.push(spec.limit, spec.lengthMs);
    command.push(Math.trunc(sentAt));
    const [kind, extra, ...raw] = await this.commands.rateLimitHit(...(command as [number, ...(string | number)[]]));
    const windows = states(specs, raw.map(Number), at);
    switch (kind) {
      case 'allowed':
        return { kind, windows };
      case 'limited':
        return { kind, windows, refusedBy: specs[Number(extra) - 1].name };
      case 'banned':
        return { kind, windows, bannedUntil: Number(extra) };
      default:
        throw new Error(`expected allowed, limited or banned from the hit script, got ${String(kind)}`);
    }
  }

  async refund(identity: string, counted: WindowState[], now: number): Promise<WindowState[]> {
    const at = Math.trunc(now);
    const keys = counted.map((window) => this.key(identity, window.name));
    const raw = await this.commands.rateLimitRefund(keys.length, ...keys, at, ...counted.map((window) => Math.trunc(window.resetAt)), ...counted.map((window) => window.limit));
    return states(counted, raw.map(Number), at);
  }

  async peek(identity: string, specs: WindowSpec[], now: number): Promise<WindowState[]> {
    const keys = specs.map((spec) => this.key(identity, spec.name));
    const raw = await this.commands.rateLimitPeek(keys.length, ...keys);
    return states(specs, raw.map(Number), Math.trunc(now));
  }

  async bannedUntil(identity: string, now: number): Promise<number | null> {
    const until = Number(await this.redis.get(this.key(identity, 'ban')));
    return until > now ? until : null;
  }

  async unban(identity: string): Promise<void> {
    await this.redis.del(this.key(identity, 'ban'), this.key(identity, 'refusals'));
  }

  async ban(identity: string, untilMs: number, now: number): Promise<void> {
    await this.commands.rateLimitBan(1, this.key(identity, 'ban'), Math.trunc(now), Math.trunc(untilMs));
  }

  /** `petstore:rl:{key:42}:minute`: the braces are the cluster hash tag. */
  key(identity: string, part: string): string {
    return this.tagged(identity) + part;
  }

  /** What every key of `identity` starts with: `petstore:rl:{key:42}:`. */
  private tagged(identity: string): string {
    return `${this.prefix}:{${identity}}:`;
  }
}

/** Pairs of (count, reset) from a script reply, reset 0 meaning the window is not running. */
function states(specs: WindowSpec[], raw: number[], now: number): WindowState[] {
  return specs.map((spec, i) => windowState(spec, raw[2 * i], raw[2 * i + 1] === 0 ? null : raw[2 * i + 1], now));
}
