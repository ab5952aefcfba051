import { BoundedCounts } from './bounded-counts';

/** How many requests of one identity may run at once, and how many more may wait for a slot. */
export interface Admission {
  /** Requests running at once. */
  max: number;
  /** Requests waiting for a slot; one more is refused at once. */
  queue: number;
  /** How long a request waits for a slot before it is refused. */
  waitMs: number;
}

/** Called with true when handed a slot, false when the wait ran out. */
type Waiter = (admitted: boolean) => void;

/**
 * Requests of each identity in flight on this instance (docs/contract.md §5, "Concurrency"). A
 * request over the bound waits, first come first served, for a slot that a finishing request
 * hands over; only a full queue or a wait that runs out refuses it. A browser page's parallel
 * queries therefore queue for a moment instead of being refused. Per instance by design, like
 * GitHub's secondary limits: it bounds what one instance carries for one client.
 */
export class InFlight {
  private readonly taken = new BoundedCounts();
  private readonly waiting = new Map<string, Waiter[]>();

  /** `onWait` hears of every request that has to wait (for metrics). */
  constructor(private readonly onWait: () => void = () => {}) {}

  /**
   * Resolves true once the identity holds a slot (call `leave` when the request ends), false when
   * the queue was full or the wait ran out. A free slot is taken before anything awaits.
   */
  enter(identity: string, admission: Admission): Promise<boolean> {
    if (this.tryEnter(identity, admission.max)) return Promise.resolve(true);
    const queue = this.waiting.get(identity) ?? [];
    if (queue.length >= admission.queue) return Promise.resolve(false);
    this.waiting.set(identity, queue);
    this.onWait();
    return new Promise((resolve) => {
      const waiter: Waiter = (admitted) => {
        clearTimeout(timer);
        resolve(admitted);
      };
      const timer = setTimeout(() => {
        this.dequeue(identity, waiter);
        waiter(false);
      }, admission.waitMs);
      queue.push(waiter);
    });
  }

  /** Takes a free slot at once, if there is one; true when taken. */
  tryEnter(identity: string, max: number): boolean {
    return this.taken.enter(identity, max);
  }

  /** Gives the slot to the longest waiter, or frees it. */
  leave(identity: string): void {
    const next = this.waiting.get(identity)?.[0];
    if (!next) return this.taken.leave(identity);
    this.dequeue(identity, next);
    next(true);
  }

  /** Slots taken by the identity. */
  of(identity: string): number {
    return this.taken.of(identity);
  }

  /** Requests of the identity waiting for a slot. */
  waitingOf(identity: string): number {
    return this.waiting.get(identity)?.length ?? 0;
  }

  private dequeue(identity: string, waiter: Waiter): void {
    const queue = this.waiting.get(identity) ?? [];
    queue.splice(queue.indexOf(waiter), 1);
    if (queue.length === 0) this.waiting.delete(identity);
  }
}
