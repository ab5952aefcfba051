import { randomBytes } from 'node:crypto';
import { withTimeout } from '../common/timeout';
import type { RedisConnection } from './redis-client';

export interface InstanceCensusOptions {
  /** How often this instance says it is alive. */
  heartbeatEveryMs?: number;
  /** A Redis answer slower than this leaves the last count as it was. */
  timeoutMs?: number;
}

/**
 * How many gateway instances share this Redis, as last seen: each instance writes a heartbeat
 * (its own member of one sorted set, scored by time) and reads how many beat within the last
 * three intervals. While Redis is slow or gone, the count stays what it was last seen, so that
 * each instance, limiting from memory, admits its share of a quota (docs/contract.md §5).
 */
export class InstanceCensus {
  private readonly id = randomBytes(8).toString('hex');
  private readonly key: string;
  private readonly everyMs: number;
  private readonly timeoutMs: number;
  private timer?: NodeJS.Timeout;
  private beating = false;
  private seen = 1;

  constructor(
    private readonly redis: RedisConnection,
    prefix: string,
    options: InstanceCensusOptions = {},
  ) {
    this.key = `${prefix}:instances`;
    this.everyMs = options.heartbeatEveryMs ?? 5_000;
    this.timeoutMs = options.timeoutMs ?? 250;
  }

  /** Instances seen alive at the last heartbeat Redis answered, this one included. */
  instances(): number {
    return this.seen;
  }

  start(): void {
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One heartbeat at a time: a slow Redis does not pile them up. */
  private async beat(): Promise<void> {
    if (this.beating || this.redis.status !== 'ready') return;
    this.beating = true;
    try {
      const now = Date.now();
      const answers = await withTimeout(
        this.redis
          .multi()
          .zadd(this.key, now, this.id)
          .zremrangebyscore(this.key, '-inf', now - 3 * this.everyMs)
          .zcard(this.key)
          .pexpire(this.key, 3 * this.everyMs)
          .exec(),
        this.timeoutMs,
      );
      const counted = answers?.[2]?.[1];
      if (typeof counted === 'number' && counted > 0) this.seen = counted;
    } catch {
      // Slow or gone: keep the count last seen.
    } finally {
      this.beating = false;
    }
  }
}
