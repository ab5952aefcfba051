import type { Scope } from '../common/scope';
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

/** Called when a slot is handed over. */
type Waiter = () => void;

/**
 * Requests of each identity in flight on this instance (docs/contract.md §5, "Concurrency"). A
 * request over the bound waits, first come first served, for a slot that a finishing request
 * hands over; only a full queue or a wait that runs out refuses it. A browser page's parallel
 * queries therefore queue for a moment instead of being refused. Per instance by design, like
 * GitHub's secondary limits: it bounds what one instance carries for one client.
 *
 * A slot is registered on its request's scope in the same step that takes it, and given back when
 * the scope ends; a waiter whose client goes leaves the queue at once.
 */
export class InFlight {
  private readonly taken = new BoundedCounts();
  private readonly waiting = new Map<string, Waiter[]>();
  private waiters = 0;

  /** `onWait` hears of every request that has to wait (for metrics). */
  constructor(private readonly onWait: () => void = () => {}) {}

  /**
   * Resolves true once the identity holds a slot for `scope`, false when the queue was full, the
   * wait ran out or the scope was aborted. A free slot is taken before anything awaits.
   */
  enter(identity: string, admission: Admission, scope: Scope): Promise<boolean> {
    if (scope.aborted) return Promise.resolve(false);
    if (this.tryEnter(identity, admission.max, scope)) return Promise.resolve(true);
    const queue = this.waiting.get(identity) ?? [];
    if (queue.length >= admission.queue) return Promise.resolve(false);
    this.waiting.set(identity, queue);
    this.onWait();
    return new Promise((resolve) => {
      const settle = (admitted: boolean) => {
        clearTimeout(timer);
        stopListening();
        resolve(admitted);
      };
      const waiter: Waiter = () => {
        scope.defer(() => this.leave(identity));
        settle(true);
      };
      const leaveQueue = () => {
        this.dequeue(identity, waiter);
        settle(false);
      };
      const timer = setTimeout(leaveQueue, admission.waitMs);
      const stopListening = scope.onAbort(leaveQueue);
      queue.push(waiter);
      this.waiters += 1;
    });
  }

  /** Takes a free slot at once for `scope`, if there is one; true when taken. */
  tryEnter(identity: string, max: number, scope: Scope): boolean {
    if (!this.taken.enter(identity, max)) return false;
    scope.defer(() => this.leave(identity));
    return true;
  }

  /** Slots taken by the identity. */
  of(identity: string): number {
    return this.taken.of(identity);
  }

  /** Requests of the identity waiting for a slot. */
  waitingOf(identity: string): number {
    return this.waiting.get(identity)?.length ?? 0;
  }

  /** Slots taken and requests waiting, over every identity (for the metrics). */
  totals(): { running: number; waiting: number } {
    return { running: this.taken.total, waiting: this.waiters };
  }

  /** Gives the slot to the longest waiter, or frees it. */
  private leave(identity: string): void {
    const next = this.waiting.get(identity)?.[0];
    if (!next) return this.taken.leave(identity);
    this.dequeue(identity, next);
    next();
  }

  private dequeue(identity: string, waiter: Waiter): void {
    const queue = this.waiting.get(identity);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return;
    queue.splice(at, 1);
    this.waiters -= 1;
    if (queue.length === 0) this.waiting.delete(identity);
  }
}
