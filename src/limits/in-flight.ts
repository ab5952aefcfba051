/**
 * Requests of each identity in flight on this instance, so that one client cannot hold the
 * database with a few slow requests however few it sends (docs/contract.md §5, "Concurrency").
 * Per instance by design, like GitHub's secondary limits: it bounds what one instance carries.
 */
export class InFlight {
  private readonly counts = new Map<string, number>();

  /** Takes a slot when fewer than `max` are taken; false when the identity is at its bound. */
  enter(identity: string, max: number): boolean {
    const count = this.counts.get(identity) ?? 0;
    if (count >= max) return false;
    this.counts.set(identity, count + 1);
    return true;
  }

  leave(identity: string): void {
    const count = (this.counts.get(identity) ?? 0) - 1;
    if (count > 0) this.counts.set(identity, count);
    else this.counts.delete(identity);
  }

  /** Slots taken by the identity. */
  of(identity: string): number {
    return this.counts.get(identity) ?? 0;
  }
}
