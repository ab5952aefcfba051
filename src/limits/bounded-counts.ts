/**
 * Counts per key with a bound: a key takes a place only while it holds fewer than `max`. The
 * check and the take are one synchronous step, so that concurrent callers cannot all see room.
 */
export class BoundedCounts {
  private readonly counts = new Map<string, number>();
  private sum = 0;

  /** Takes a place when fewer than `max` are taken; false when the key is at its bound. */
  enter(key: string, max: number): boolean {
    const count = this.counts.get(key) ?? 0;
    if (count >= max) return false;
    this.counts.set(key, count + 1);
    this.sum += 1;
    return true;
  }

  leave(key: string): void {
    if (!this.counts.has(key)) return;
    this.sum -= 1;
    const count = (this.counts.get(key) ?? 0) - 1;
    if (count > 0) this.counts.set(key, count);
    else this.counts.delete(key);
  }

  /** Places taken over every key. */
  get total(): number {
    return this.sum;
  }

  /** Places taken by the key. */
  of(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}
