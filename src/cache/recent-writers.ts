import type { RedisConnection } from '../limits/redis-client';

/** Past this many callers remembered, the expired ones are swept. */
const SWEEP_PAST = 10_000;

/**
 * When each caller last wrote, for as long as a cached answer lives: an answer whose read began
 * before a caller's last write is never served to that caller. Kept in this process and in Redis
 * (`<prefix>:{rc}:w:<identity>`), so that every instance knows of a write made on another.
 */
export class RecentWriters {
  private readonly memory = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly redis?: { client: RedisConnection; prefix: string; usable: () => boolean },
    private readonly now: () => number = Date.now,
  ) {}

  /** `identity` has just committed a write. Resolves once every instance can know it (or Redis failed). */
  async wrote(identity: string): Promise<void> {
    const at = this.now();
    this.memory.set(identity, at);
    if (this.memory.size > SWEEP_PAST) this.sweep(at);
    if (!this.redis?.usable()) return;
    await this.redis.client.set(this.sharedKey(identity), String(at), 'PX', this.ttlMs).catch(() => undefined);
  }

  /**
   * When `identity` last wrote, as far as this instance knows and `shared` (what Redis holds
   * under `sharedKey(identity)`, read by the caller with whatever else it needs) says; 0 for not lately.
   */
  lastWrite(identity: string, shared: string | null = null): number {
    const here = this.memory.get(identity) ?? 0;
    return shared === null ? here : Math.max(here, Number(shared));
  }

  /** Where Redis keeps `identity`'s last write. */
  sharedKey(identity: string): string {
    return `${this.redis?.prefix}:{rc}:w:${identity}`;
  }

  private sweep(now: number): void {
    for (const [identity, at] of this.memory) if (at + this.ttlMs <= now) this.memory.delete(identity);
  }
}
