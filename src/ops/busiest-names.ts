/**
 * The `capacity` busiest names of an unbounded stream (space-saving, Metwally, Agrawal and El
 * Abbadi 2005): a name not kept takes the place of the least counted one and inherits its count
 * plus one, so a name seen often outlasts any number of names seen once, and every name seen
 * more than 1/capacity of the time is kept. Clients choose the names: the first ones must not
 * hold the places for good.
 */
export class BusiestNames {
  private readonly counts = new Map<string, number>();

  constructor(readonly capacity: number) {}

  /** Counts one occurrence of `name`, which is kept; returns the name it displaced, if any. */
  observe(name: string): string | undefined {
    const count = this.counts.get(name);
    if (count !== undefined) {
      this.counts.set(name, count + 1);
      return undefined;
    }
    if (this.counts.size < this.capacity) {
      this.counts.set(name, 1);
      return undefined;
    }
    // O(capacity), only for a name not kept: a few hundred comparisons.
    let least: string | undefined;
    let leastCount = Infinity;
    for (const [kept, keptCount] of this.counts) {
      if (keptCount < leastCount) {
        least = kept;
        leastCount = keptCount;
      }
    }
    this.counts.delete(least!);
    this.counts.set(name, leastCount + 1);
    return least;
  }

  has(name: string): boolean {
    return this.counts.has(name);
  }

  get size(): number {
    return this.counts.size;
  }
}
