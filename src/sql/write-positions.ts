/** The part of an ioredis client (single, Cluster or Sentinel) the positions use. */
export interface PositionsRedis {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  get(key: string): Promise<string | null>;
}

/**
 * A position no replica reaches: what a caller's last write counts as when it cannot be known
 * (Redis away, the primary's position unread), so that its reads go to the primary.
 */
export const UNKNOWN_POSITION = (1n << 64n) - 1n;

/** Sets the key to the greater of its value and ARGV[1] (fixed-width hex compares as text), with ARGV[2] ms to live. */
const KEEP_GREATER = `
local current = redis.call('GET', KEYS[1])
if (not current) or current < ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`;

/**
 * How long a caller's position is kept: well past the time any replica that takes reads needs to
 * replay it (each is at most DATABASE_READ_MAX_LAG_MS behind), and never under ten seconds.
 */
export const writePositionTtlMs = (maxLagMs: number) => Math.max(10_000, 10 * maxLagMs);

/** Memory entries past this many are swept of the expired ones. */
const SWEEP_PAST = 10_000;

/**
 * Each caller's last commit position (read-your-writes, docs/contract.md), for a short while: in
 * Redis when configured, so that every instance knows it, and in this instance's memory either
 * way, so that a caller still reads its writes here while Redis is away.
 */
export class WritePositions {
  private readonly memory = new Map<string, { lsn: bigint; until: number }>();

  constructor(
    readonly ttlMs: number,
    private readonly redis?: { client: PositionsRedis; prefix: string },
  ) {}

  /** `identity` committed at `lsn`; a later, greater position is never replaced by an earlier one. */
  async remember(identity: string, lsn: bigint): Promise<void> {
    const held = this.local(identity);
    if (held === undefined || held < lsn) this.memory.set(identity, { lsn, until: Date.now() + this.ttlMs });
    if (this.memory.size > SWEEP_PAST) this.sweep();
    if (!this.redis) return;
    try {
      await this.redis.client.eval(KEEP_GREATER, 1, this.keyOf(identity), hexOf(lsn), this.ttlMs);
    } catch {
      // This instance still knows; the client holds it too (X-Read-After).
    }
  }

  /** The last position `identity` committed at, as far as any instance knows; UNKNOWN_POSITION when it cannot be told. */
  async of(identity: string): Promise<bigint | undefined> {
    const held = this.local(identity);
    if (!this.redis) return held;
    try {
      const shared = await this.redis.client.get(this.keyOf(identity));
      const lsn = shared === null ? undefined : BigInt(`0x${shared}`);
      return held === undefined || (lsn !== undefined && lsn > held) ? lsn : held;
    } catch {
      return UNKNOWN_POSITION;
    }
  }

  private local(identity: string): bigint | undefined {
    const entry = this.memory.get(identity);
    if (entry === undefined) return undefined;
    if (entry.until > Date.now()) return entry.lsn;
    this.memory.delete(identity);
    return undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [identity, { until }] of this.memory) if (until <= now) this.memory.delete(identity);
  }

  private keyOf(identity: string): string {
    return `${this.redis?.prefix}:ryw:${identity}`;
  }
}

/** 16 hex digits: positions compare as text in Redis's scripts. */
const hexOf = (lsn: bigint) => lsn.toString(16).toUpperCase().padStart(16, '0');
