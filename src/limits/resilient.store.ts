import type { Redis } from 'ioredis';
import type { Logger } from '../logger';
import type { BanPolicy, LimiterStore, StoreOutcome, StoreStatus } from './limiter-store';
import type { WindowSpec, WindowState } from './window';

export interface ResilientOptions {
  logger: Logger;
  /** A Redis call slower than this is treated as failed; the request is answered from memory. */
  timeoutMs?: number;
  /** While degraded, how often Redis is pinged to notice that it answers again. */
  probeEveryMs?: number;
}

/**
 * The Redis store with an in-memory insurance store (as rate-limiter-flexible's insurance
 * limiter): when Redis fails or is slow, requests are limited per instance from memory instead
 * of stalling or failing, and Redis is used again as soon as it answers.
 *
 * While degraded, Redis is not tried at all: every request goes straight to memory, and a probe
 * (plus ioredis's 'ready' event) brings Redis back. State is not copied either way: during an
 * outage each instance counts only what it sees, bans made then stay in that instance, and
 * Redis resumes with what it held. An unban made during an outage is replayed on Redis when it
 * returns, so that the admin's unban holds. A call that timed out may still be counted by Redis
 * later: the request then counts twice, never zero times.
 */
export class ResilientLimiterStore implements LimiterStore {
  private state: StoreStatus;
  private probe?: NodeJS.Timeout;
  private readonly pendingUnbans = new Set<string>();
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly probeEveryMs: number;
  private readonly onReady = () => this.recover();
  private readonly onClose = () => this.degrade(new Error('connection closed'));

  constructor(
    private readonly primary: LimiterStore,
    private readonly insurance: LimiterStore,
    private readonly redis: Redis,
    options: ResilientOptions,
  ) {
    this.logger = options.logger;
    this.timeoutMs = options.timeoutMs ?? 250;
    this.probeEveryMs = options.probeEveryMs ?? 1_000;
    this.state = 'ok';
    redis.on('ready', this.onReady);
    redis.on('close', this.onClose);
    if (redis.status !== 'ready') this.degrade(new Error(`Redis is ${redis.status}`));
  }

  /** 'degraded' while limits are per instance (for /readyz). */
  status(): StoreStatus {
    return this.state;
  }

  hit(identity: string, windows: WindowSpec[], now: number, ban: BanPolicy): Promise<StoreOutcome> {
    return this.run((store) => store.hit(identity, windows, now, ban));
  }

  peek(identity: string, windows: WindowSpec[], now: number): Promise<WindowState[]> {
    return this.run((store) => store.peek(identity, windows, now));
  }

  bannedUntil(identity: string, now: number): Promise<number | null> {
    return this.run((store) => store.bannedUntil(identity, now));
  }

  async unban(identity: string): Promise<void> {
    await this.insurance.unban(identity);
    if (this.state === 'ok') {
      try {
        await withTimeout(this.primary.unban(identity), this.timeoutMs);
        return;
      } catch (error) {
        this.degrade(error);
      }
    }
    this.pendingUnbans.add(identity);
  }

  /** Stops listening and probing; the caller closes the Redis client. */
  close(): void {
    this.stopProbe();
    this.redis.off('ready', this.onReady);
    this.redis.off('close', this.onClose);
  }

  private async run<T>(call: (store: LimiterStore) => Promise<T>): Promise<T> {
    if (this.state === 'ok') {
      try {
        return await withTimeout(call(this.primary), this.timeoutMs);
      } catch (error) {
        this.degrade(error);
      }
    }
    return call(this.insurance);
  }

  private degrade(error: unknown): void {
    if (this.state === 'degraded') return;
    this.state = 'degraded';
    this.logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'Redis is unreachable: rate limits and bans are now per instance, from memory',
    );
    this.probe = setInterval(() => void this.ping(), this.probeEveryMs);
    this.probe.unref();
  }

  private async ping(): Promise<void> {
    if (this.redis.status !== 'ready') return;
    try {
      await withTimeout(this.redis.ping(), this.timeoutMs);
      this.recover();
    } catch {
      // Still unreachable: the next probe tries again.
    }
  }

  private recover(): void {
    if (this.state === 'ok') return;
    this.state = 'ok';
    this.stopProbe();
    this.logger.info('Redis answers again: rate limits and bans are shared again');
    for (const identity of this.pendingUnbans) {
      this.primary.unban(identity).then(
        () => this.pendingUnbans.delete(identity),
        () => undefined, // kept: replayed at the next recovery
      );
    }
  }

  private stopProbe(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`expected Redis to answer within ${ms} ms, got no answer`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
