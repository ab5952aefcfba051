import { withTimeout } from '../common/timeout';
import type { Logger } from '../logger';
import { LastRedisWindows } from './last-redis-windows';
import type { BanPolicy, LimiterStore, StoreOutcome, StoreStatus } from './limiter-store';
import { type RedisConnection, serving } from './redis-client';
import type { WindowSpec, WindowState } from './window';

export interface ResilientOptions {
  logger: Logger;
  /** A Redis call slower than this is treated as failed; the request is answered from memory. */
  timeoutMs?: number;
  /** While degraded, how often Redis is pinged to notice that it answers again. */
  probeEveryMs?: number;
  /** The instances sharing this Redis as last seen: from memory, each admits its share of a quota. */
  instances?: () => number;
  /** Where Redis is (redisAddress), for the outage's log line. */
  address?: string;
}

/** Where a call was answered: each is told what its store answered. */
interface Answered<T> {
  fromRedis?: (result: T) => void;
  fromMemory?: (result: T) => void;
}

/**
 * Bans (and unbans) made in memory during an outage and kept for Redis's return, at most: past it
 * the ones already over go first, then the oldest (it still holds on this instance).
 */
export const MAX_PENDING_DECISIONS = 10_000;

/**
 * The Redis store with an in-memory insurance store (as rate-limiter-flexible's insurance
 * limiter): when Redis fails or is slow, requests are limited per instance from memory instead
 * of stalling or failing, and Redis is used again as soon as it answers.
 *
 * While degraded, Redis is not tried at all: every request goes straight to memory, and a probe
 * (plus ioredis's 'ready' event) brings Redis back. Counts are not copied either way: during an
 * outage each instance counts only what it sees, and Redis resumes with the windows it held.
 * Decisions are carried over when Redis returns: unbans made during the outage are replayed on
 * Redis first, so that the admin's unban holds, then bans made during it, so that a client that
 * earned a ban stays banned on every instance until it ends. A call that timed out may still be
 * counted by Redis later: the request then counts twice, never zero times.
 *
 * From memory each instance admits its share of every window, the limit divided by the instances
 * it last saw (rounded down), so that together they admit at most the quota, not a quota each.
 * What Redis had already admitted in a window still running is deducted first: each instance
 * keeps the window states Redis last answered it per identity (`LastRedisWindows`, bounded), and
 * admits from memory at most (limit − that count) ÷ instances more in that window. The instances
 * read the same shared count, so Redis's admissions and theirs together stay within the quota
 * (as closely as their last answers agree).
 */
export class ResilientLimiterStore implements LimiterStore {
  private state: StoreStatus;
  private probe?: NodeJS.Timeout;
  private readonly pendingUnbans = new Set<string>();
  /** Bans made in memory during an outage: identity → when the ban ends. */
  private readonly pendingBans = new Map<string, number>();
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  /** Made once: every request's Redis call would build it again otherwise. */
  private readonly timeoutMessage: string;
  private readonly address?: string;
  private readonly probeEveryMs: number;
  private readonly instances: () => number;
  private readonly lastRedis: LastRedisWindows;
  private readonly onReady = () => this.recover();
  private readonly onClose = () => this.degrade(new Error('connection closed'));

  constructor(
    private readonly primary: LimiterStore,
    private readonly insurance: LimiterStore,
    private readonly redis: RedisConnection,
    options: ResilientOptions,
  ) {
    this.logger = options.logger;
    this.timeoutMs = options.timeoutMs ?? 250;
    this.timeoutMessage = `expected Redis to answer within ${this.timeoutMs} ms, got no answer`;
    this.probeEveryMs = options.probeEveryMs ?? 1_000;
    this.instances = options.instances ?? (() => 1);
    this.address = options.address;
    this.lastRedis = new LastRedisWindows();
    this.state = 'ok';
    redis.on('ready', this.onReady);
    redis.on('close', this.onClose);
    if (redis.status !== 'ready') this.degrade(new Error(`Redis is ${redis.status}`));
  }

  /** 'degraded' while limits are per instance (for /readyz). */
  status(): StoreStatus {
    return this.state;
  }

  hit(identity: string, windows: WindowSpec[], now: number, ban: BanPolicy, sentAt = now): Promise<StoreOutcome> {
    return this.run((store) => store.hit(identity, this.shareOf(store, identity, windows, now), now, ban, sentAt), {
      fromRedis: (outcome) => this.lastRedis.remember(identity, outcome.windows),
      fromMemory: (outcome) => {
        if (outcome.kind === 'banned') this.keepBan(identity, outcome.bannedUntil);
      },
    });
  }

  /** Where Redis answers now: a count made in memory during an outage is not Redis's, and the other way round (the reset times differ). */
  refund(identity: string, counted: WindowState[], now: number): Promise<WindowState[]> {
    return this.run((store) => store.refund(identity, counted, now), { fromRedis: (windows) => this.lastRedis.remember(identity, windows) });
  }

  peek(identity: string, windows: WindowSpec[], now: number): Promise<WindowState[]> {
    return this.run((store) => store.peek(identity, this.shareOf(store, identity, windows, now), now), {
      fromRedis: (states) => this.lastRedis.remember(identity, states),
    });
  }

  bannedUntil(identity: string, now: number): Promise<number | null> {
    return this.run((store) => store.bannedUntil(identity, now));
  }

  ban(identity: string, untilMs: number, now: number): Promise<void> {
    return this.run((store) => store.ban(identity, untilMs, now), { fromMemory: () => this.keepBan(identity, untilMs) });
  }

  async unban(identity: string): Promise<void> {
    this.pendingBans.delete(identity);
    await this.insurance.unban(identity);
    if (this.state === 'ok') {
      try {
        await this.withinTimeout(this.primary.unban(identity));
        return;
      } catch (error) {
        this.degrade(error);
      }
    }
    if (this.pendingUnbans.size >= MAX_PENDING_DECISIONS) this.pendingUnbans.delete(this.pendingUnbans.values().next().value as string);
    this.pendingUnbans.add(identity);
  }

  private keepBan(identity: string, untilMs: number): void {
    if (this.pendingBans.size >= MAX_PENDING_DECISIONS && !this.pendingBans.has(identity)) {
      const now = Date.now();
      for (const [banned, until] of this.pendingBans) if (until <= now) this.pendingBans.delete(banned);
      if (this.pendingBans.size >= MAX_PENDING_DECISIONS) this.pendingBans.delete(this.pendingBans.keys().next().value as string);
    }
    this.pendingBans.set(identity, untilMs);
  }

  /** Stops listening and probing; the caller closes the Redis client. */
  close(): void {
    this.stopProbe();
    this.redis.off('ready', this.onReady);
    this.redis.off('close', this.onClose);
  }

  /**
   * Runs `call` on Redis, else on memory, and tells `answered` which store answered what. An
   * answer Redis gives past the deadline is not heard: that request was decided from memory.
   */
  private async run<T>(call: (store: LimiterStore) => Promise<T>, answered: Answered<T> = {}): Promise<T> {
    if (this.state === 'ok') {
      try {
        const result = await this.withinTimeout(call(this.primary));
        answered.fromRedis?.(result);
        return result;
      } catch (error) {
        this.degrade(error);
      }
    }
    const result = await call(this.insurance);
    answered.fromMemory?.(result);
    return result;
  }

  /**
   * Redis's windows as configured; memory's, this instance's share of what Redis had not yet
   * admitted in each window still running when it last answered (of the whole limit where none is).
   */
  private shareOf(store: LimiterStore, identity: string, windows: WindowSpec[], now: number): WindowSpec[] {
    if (store === this.primary) return windows;
    const instances = Math.max(1, this.instances());
    return windows.map((window) => {
      const left = Math.max(0, window.limit - this.lastRedis.counted(identity, window.name, now));
      return { ...window, limit: Math.floor(left / instances) };
    });
  }

  private degrade(error: unknown): void {
    if (this.state === 'degraded') return;
    this.state = 'degraded';
    this.logger.warn(
      { err: error instanceof Error ? error.message : String(error), redis: this.address },
      `${this.address ? `Redis at ${this.address}` : 'Redis'} is unreachable: rate limits and bans are now per instance, from memory`,
    );
    this.probe = setInterval(() => void this.ping(), this.probeEveryMs);
    this.probe.unref();
  }

  private async ping(): Promise<void> {
    if (this.redis.status !== 'ready') return;
    try {
      if (await this.withinTimeout(serving(this.redis))) this.recover();
    } catch {
      // Still unreachable: the next probe tries again.
    }
  }

  private recover(): void {
    if (this.state === 'ok') return;
    this.state = 'ok';
    this.stopProbe();
    this.logger.info('Redis answers again: rate limits and bans are shared again');
    void this.carryOver();
  }

  /** Unbans, then bans, made during the outage; what Redis refuses is kept for the next recovery. */
  private async carryOver(): Promise<void> {
    await Promise.all(
      [...this.pendingUnbans].map((identity) =>
        this.primary.unban(identity).then(
          () => this.pendingUnbans.delete(identity),
          () => undefined,
        ),
      ),
    );
    const now = Date.now();
    await Promise.all(
      [...this.pendingBans].map(([identity, untilMs]) => {
        if (untilMs <= now) return this.pendingBans.delete(identity);
        return this.primary.ban(identity, untilMs, now).then(
          () => {
            if (this.pendingBans.get(identity) === untilMs) this.pendingBans.delete(identity);
          },
          () => undefined,
        );
      }),
    );
  }

  private withinTimeout<T>(call: Promise<T>): Promise<T> {
    return withTimeout(call, this.timeoutMs, this.timeoutMessage);
  }

  private stopProbe(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
  }
}
