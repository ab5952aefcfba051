/** The part of an ioredis client (single, Cluster or Sentinel) the positions use. */
export interface PositionsRedis {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
}

/**
 * A position no replica reaches: what a caller's last write counts as while it cannot be known
 * (Redis away, the primary's position unread), so that its reads go to the primary.
 */
export const UNKNOWN_POSITION = (1n << 64n) - 1n;

/**
 * A caller's hash: `lsn`, the greatest position it committed at (fixed-width hex compares as
 * text), and `unknownUntil`, the time (the callers' clock) before which a write of unknown
 * position sends its reads to the primary. ARGV[1]: a position, or '' for an unknown one;
 * ARGV[2]: that time; ARGV[3]: ms to live, counted from the caller's last write.
 */
const REMEMBER = `
if ARGV[1] == '' then
  local held = redis.call('HGET', KEYS[1], 'unknownUntil')
  if (not held) or tonumber(held) < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'unknownUntil', ARGV[2]) end
else
  local current = redis.call('HGET', KEYS[1], 'lsn')
  if (not current) or current < ARGV[1] then redis.call('HSET', KEYS[1], 'lsn', ARGV[1]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

/**
 * How long a caller's position is kept: well past the time any replica that takes reads needs to
 * replay it (each is at most DATABASE_READ_MAX_LAG_MS behind), and never under ten seconds.
 */
export const writePositionTtlMs = (maxLagMs: number) => Math.max(10_000, 10 * maxLagMs);

/** Memory entries past this many are swept of the expired ones. */
const SWEEP_PAST = 10_000;

/** What this instance holds of a caller: its greatest known position, and how long a write of unknown position counts. */
interface Held {
  lsn?: bigint;
  until: number;
  unknownUntil: number;
}

/**
 * Each caller's last commit position (read-your-writes, docs/contract.md), for a short while: in
 * Redis when configured, so that every instance knows it, and in this instance's memory either
 * way, so that a caller still reads its writes here while Redis is away. A write whose position
 * is unknown counts for as long as any other, from when it was made: the caller's later writes
 * neither lengthen it nor are forgotten behind it.
 */
export class WritePositions {
  private readonly memory = new Map<string, Held>();

  constructor(
    readonly ttlMs: number,
    private readonly redis?: { client: PositionsRedis; prefix: string },
    private readonly now: () => number = Date.now,
  ) {}

  /** `identity` committed at `lsn` (UNKNOWN_POSITION: one that could not be read); a greater position is never replaced by a smaller one. */
  async remember(identity: string, lsn: bigint): Promise<void> {
    const unknown = lsn === UNKNOWN_POSITION;
    const until = this.now() + this.ttlMs;
    const held = this.local(identity) ?? { until, unknownUntil: 0 };
    held.until = until;
    if (unknown) held.unknownUntil = until;
    else if (held.lsn === undefined || held.lsn < lsn) held.lsn = lsn;
    this.memory.set(identity, held);
    if (this.memory.size > SWEEP_PAST) this.sweep();
    if (!this.redis) return;
    try {
      await this.redis.client.eval(REMEMBER, 1, this.keyOf(identity), unknown ? '' : hexOf(lsn), until, this.ttlMs);
    } catch {
      // This instance still knows; the client holds it too (X-Read-After).
    }
  }

  /** The last position `identity` committed at, as far as any instance knows; UNKNOWN_POSITION while one is unknown, or cannot be told. */
  async of(identity: string): Promise<bigint | undefined> {
    const now = this.now();
    const held = this.local(identity);
    if (held !== undefined && held.unknownUntil > now) return UNKNOWN_POSITION;
    if (!this.redis) return held?.lsn;
    try {
      const [shared, unknownUntil] = await this.redis.client.hmget(this.keyOf(identity), 'lsn', 'unknownUntil');
      if (unknownUntil !== null && Number(unknownUntil) > now) return UNKNOWN_POSITION;
      const lsn = shared === null ? undefined : BigInt(`0x${shared}`);
      return held?.lsn === undefined || (lsn !== undefined && lsn > held.lsn) ? lsn : held.lsn;
    } catch {
      return UNKNOWN_POSITION;
    }
  }

  private local(identity: string): Held | undefined {
    const held = this.memory.get(identity);
    if (held === undefined) return undefined;
    if (held.until > this.now()) return held;
    this.memory.delete(identity);
    return undefined;
  }

  private sweep(): void {
    const now = this.now();
    for (const [identity, { until }] of this.memory) if (until <= now) this.memory.delete(identity);
  }

  private keyOf(identity: string): string {
    return `${this.redis?.prefix}:read-after:${identity}`;
  }
}

/** 16 hex digits: positions compare as text in Redis's scripts. */
const hexOf = (lsn: bigint) => lsn.toString(16).toUpperCase().padStart(16, '0');
