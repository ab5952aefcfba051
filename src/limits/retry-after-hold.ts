import { boundedCache } from '../common/bounded-cache';
import type { Scope } from '../common/scope';

/** Identities remembered with the moment they were told to come back: the most recent ones. */
const REMEMBERED = 100_000;

/** One identity's requests held: in order of arrival, and whether one of them is out being answered. */
interface Held {
  waiters: { scope: Scope; admit: (admitted: boolean) => void }[];
  out: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * The moment each identity was told to come back (a refusal's Retry-After), and the requests it
 * sent before then, held (docs/contract.md §5, "Clients that ignore Retry-After"). A held request
 * holds nothing but its connection and a place in its identity's line: it is admitted when the
 * Retry-After has passed, one at a time, the next only once the one before has been answered (and
 * after the Retry-After that answer gave, if it was refused again). A client that ignores
 * Retry-After and sends again at once, as a crowd does, therefore gets about one request answered
 * per Retry-After, whatever it has in flight, instead of as many as the instance can refuse:
 * refusing costs the instance's event loop, which every other client shares. Per instance, in
 * memory, like the in-flight bound.
 */
export class RetryAfterHold {
  private readonly until = boundedCache<string, number>(REMEMBERED);
  private readonly held = new Map<string, Held>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The identity was told to retry after `seconds`. */
  told(identity: string, seconds: number): void {
    const until = this.now() + seconds * 1000;
    if (until > (this.until.get(identity) ?? 0)) this.until.set(identity, until);
  }

  /**
   * Undefined when the identity may go on at once (it was not told to wait, or that has passed,
   * and none of its requests is held); else resolves true when the request's turn has come, which
   * ends with `scope`, and false when its client went meanwhile.
   */
  enter(identity: string, scope: Scope): Promise<boolean> | undefined {
    let held = this.held.get(identity);
    if (!held && this.earlyBy(identity) === 0) return undefined;
    if (!held) this.held.set(identity, (held = { waiters: [], out: false }));
    const line = held;
    return new Promise((resolve) => {
      const waiter = { scope, admit: resolve };
      const stop = scope.onAbort(() => {
        const at = line.waiters.indexOf(waiter);
        if (at >= 0) line.waiters.splice(at, 1);
        resolve(false);
        this.next(identity);
      });
      waiter.admit = (admitted) => {
        stop();
        resolve(admitted);
      };
      line.waiters.push(waiter);
      this.next(identity);
    });
  }

  /** The identity's requests held now. */
  heldOf(identity: string): number {
    return this.held.get(identity)?.waiters.length ?? 0;
  }

  /** Requests held now, over every identity (for the metrics). */
  get waiting(): number {
    let waiting = 0;
    for (const held of this.held.values()) waiting += held.waiters.length;
    return waiting;
  }

  private earlyBy(identity: string): number {
    const until = this.until.get(identity);
    if (until === undefined) return 0;
    const early = until - this.now();
    if (early > 0) return early;
    this.until.delete(identity);
    return 0;
  }

  /** Lets the identity's next held request go once none is out and its Retry-After has passed. */
  private next(identity: string): void {
    const held = this.held.get(identity);
    if (!held || held.out || held.timer) return;
    if (held.waiters.length === 0) {
      this.held.delete(identity);
      return;
    }
    const early = this.earlyBy(identity);
    if (early > 0) {
      held.timer = setTimeout(() => {
        held.timer = undefined;
        this.next(identity);
      }, early).unref();
      return;
    }
    const waiter = held.waiters.shift()!;
    held.out = true;
    // Once its answer is written, and the Retry-After of a refusal noted, the next may go.
    waiter.scope.defer(() =>
      setImmediate(() => {
        held.out = false;
        this.next(identity);
      }),
    );
    waiter.admit(true);
  }
}
