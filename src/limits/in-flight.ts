/** How many requests of one identity may run at once, and how many more may wait for a slot. */
export interface Admission {
  /** Requests running at once. */
  max: number;
  /** Requests waiting for a slot; one more is refused at once. */
  queue: number;
  /** How long a request waits for a slot before it is refused. */
  waitMs: number;
}

interface Slots {
  taken: number;
  /** Waiters in arrival order; each is called with true when handed a slot, false when its wait ran out. */
  waiting: ((admitted: boolean) => void)[];
}

/**
 * Requests of each identity in flight on this instance (docs/contract.md §5, "Concurrency"). A
 * request over the bound waits, first come first served, for a slot that a finishing request
 * hands over; only a full queue or a wait that runs out refuses it. A browser page's parallel
 * queries therefore queue for a moment instead of being refused. Per instance by design, like
 * GitHub's secondary limits: it bounds what one instance carries for one client.
 */
export class InFlight {
  private readonly slots = new Map<string, Slots>();

  /** `onWait` hears of every request that has to wait (for metrics). */
  constructor(private readonly onWait: () => void = () => {}) {}

  /**
   * Resolves true once the identity holds a slot (call `leave` when the request ends), false when
   * the queue was full or the wait ran out. A free slot is taken before anything awaits, so that
   * concurrent requests cannot all see it free.
   */
  enter(identity: string, admission: Admission): Promise<boolean> {
    const slots = this.slots.get(identity) ?? { taken: 0, waiting: [] };
    this.slots.set(identity, slots);
    if (slots.taken < admission.max) {
      slots.taken += 1;
      return Promise.resolve(true);
    }
    if (slots.waiting.length >= admission.queue) return Promise.resolve(false);
    this.onWait();
    return new Promise((resolve) => {
      const waiter = (admitted: boolean) => {
        clearTimeout(timer);
        resolve(admitted);
      };
      const timer = setTimeout(() => {
        slots.waiting.splice(slots.waiting.indexOf(waiter), 1);
        waiter(false);
      }, admission.waitMs);
      slots.waiting.push(waiter);
    });
  }

  /** Gives the slot to the longest waiter, or frees it. */
  leave(identity: string): void {
    const slots = this.slots.get(identity);
    if (!slots) return;
    const next = slots.waiting.shift();
    if (next) return next(true);
    slots.taken -= 1;
    if (slots.taken <= 0) this.slots.delete(identity);
  }

  /** Slots taken by the identity. */
  of(identity: string): number {
    return this.slots.get(identity)?.taken ?? 0;
  }

  /** Requests of the identity waiting for a slot. */
  waitingOf(identity: string): number {
    return this.slots.get(identity)?.waiting.length ?? 0;
  }
}
