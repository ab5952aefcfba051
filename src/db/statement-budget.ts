import type { AbortWatch, Scope } from '../common/scope';
import { ApiError, type RequestRefusal } from '../errors';
import { databaseBusy } from '../refusals';
import type { Budget } from '../sql/statements';
import type { DatabaseTime } from './database-time';

/**
 * What one request may ask of the database (docs/contract.md §5): statements in all, and at
 * once. No query within the cost limit comes near the total (an unbatched statement costs at
 * least 10). Statements at once are bounded per identity, over all its requests in flight: one
 * client's scans cannot take every connection, nor every core of the database.
 */
export const STATEMENTS_PER_REQUEST = 200;

/**
 * A wait for a slot that ran out. `turnedOver`: some holder freed its slot meanwhile, so the
 * statements ahead were running, only too many of them; otherwise none finished in a whole wait,
 * as when the database hangs.
 */
export class SlotWaitTimeout extends Error {
  constructor(
    timeoutMs: number,
    readonly turnedOver: boolean,
  ) {
    super(`waited ${timeoutMs} ms for a statement slot`);
    this.name = 'SlotWaitTimeout';
  }
}

/** A counting semaphore: `size` holders at once, the rest wait in order. */
export class Slots {
  private running = 0;
  /** Slots freed so far: a waiter that sees this move knows its client's statements are running. */
  private freed = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly size: number,
    private readonly onIdle: () => void = () => undefined,
  ) {}

  /** Slots taken now. */
  get taken(): number {
    return this.running;
  }

  /**
   * Waits for a slot, at most `timeoutMs` (then rejects with SlotWaitTimeout), leaving the queue
   * at once when `client` aborts (rejecting with its reason); the returned function frees the
   * slot (once).
   */
  async take(timeoutMs = Infinity, client?: AbortWatch): Promise<() => void> {
    if (client?.aborted) throw client.reason;
    if (this.running < this.size) this.running += 1;
    else {
      const freedBefore = this.freed;
      await new Promise<void>((resolve, reject) => {
        const settle = () => {
          clearTimeout(timer);
          stopListening?.();
        };
        const leaveQueue = () => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          settle();
        };
        const waiter = () => {
          settle();
          resolve();
        };
        const onAbort = () => {
          leaveQueue();
          reject(client?.reason);
        };
        const timer = Number.isFinite(timeoutMs)
          ? setTimeout(() => {
              leaveQueue();
              reject(new SlotWaitTimeout(timeoutMs, this.freed !== freedBefore));
            }, timeoutMs)
          : undefined;
        const stopListening = client?.onAbort(onAbort);
        this.waiting.push(waiter);
      });
    }
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.freed += 1;
      // The slot passes straight to the next waiter, if any.
      const next = this.waiting.shift();
      if (next) return next();
      this.running -= 1;
      if (this.running === 0) this.onIdle();
    };
  }
}

/** The statement slots of each identity with statements running or waiting; no others are kept. */
export class IdentitySlots {
  private readonly slots = new Map<string, Slots>();

  of(identity: string, size: number): Slots {
    let slots = this.slots.get(identity);
    if (!slots) {
      slots = new Slots(size, () => this.slots.delete(identity));
      this.slots.set(identity, slots);
    }
    return slots;
  }

  /** Slots taken over every identity (for the metrics). */
  taken(): number {
    let taken = 0;
    for (const slots of this.slots.values()) taken += slots.taken;
    return taken;
  }
}

/** What one request's statements may use: its identity's slots and database time. */
export interface StatementAllowance {
  /** Looked up at each statement: an identity's slots are dropped while none is taken. */
  slots: () => Slots;
  /** How long a statement waits for a slot (DATABASE_STATEMENT_TIMEOUT_MS). */
  waitMs: number;
  /** The identity's database time, and how much of it it may use a minute. */
  time?: { meter: DatabaseTime; identity: string; allowanceMs: number };
  /** Statements in all. */
  total?: number;
  /** Told of the request's refusal, once. */
  onRefusal?: (refusal: RequestRefusal) => void;
  /**
   * The request's scope: a wait for a slot ends when its client goes, running statements are
   * cancelled, and no slot outlives the request.
   */
  scope?: Scope;
}

/**
 * One request's allowance. A statement here is a checkout of a pool connection (sql/statements.ts):
 * one statement for every read, one for a whole transaction.
 */
export class StatementBudget implements Budget {
  private used = 0;
  private refusal?: RequestRefusal;
  readonly total: number;

  constructor(private readonly allowance: StatementAllowance) {
    this.total = allowance.total ?? STATEMENTS_PER_REQUEST;
  }

  /** Aborted when the request's client goes: its running statements are cancelled. */
  get client(): AbortWatch | undefined {
    return this.allowance.scope;
  }

  /** Takes one statement, waiting for a slot; the returned function frees the slot. */
  async acquire(): Promise<() => void> {
    // Once refused, the request's other statements are refused at once rather than queued.
    if (this.refusal) throw this.refusal;
    if (this.used >= this.total) {
      throw new ApiError('QUERY_TOO_COMPLEX', `This request has run the ${this.total} database statements a request may run; ask for less at once`);
    }
    this.used += 1;
    const { time } = this.allowance;
    const waitMs = time ? time.meter.waitMs(time.identity, time.allowanceMs) : 0;
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      throw this.refuse(`This client has used its ${time!.allowanceMs / 1000} s of database time a minute; retry in ${seconds} s`, seconds);
    }
    try {
      // A turn is waited for at most as long as a statement may run.
      const { scope } = this.allowance;
      const free = await this.allowance.slots().take(this.allowance.waitMs, scope);
      return scope ? scope.defer(free) : free;
    } catch (error) {
      if (!(error instanceof SlotWaitTimeout)) throw error;
      // The client's own statements held every slot it has, and kept finishing: its backlog is
      // its own, and it is told to slow down. None finished in a whole statement timeout: the
      // database is not answering (503, as for the statements ahead).
      if (!error.turnedOver) throw new Error(`timeout exceeded when trying to connect: ${error.message}, none of this client's statements ahead finished`);
      throw this.refuse(`This client's earlier statements kept every one of its statement slots for ${this.allowance.waitMs} ms; send fewer requests at once`, 1);
    }
  }

  /** Charges the identity for `ms` a statement held its connection. */
  charge(ms: number): void {
    const { time } = this.allowance;
    time?.meter.spend(time.identity, time.allowanceMs, ms);
  }

  /** The request's refusal: its statements waiting at once are all refused, but it is reported once. */
  private refuse(message: string, retryAfterSeconds: number): RequestRefusal {
    if (this.refusal) return this.refusal;
    this.refusal = databaseBusy(message, retryAfterSeconds);
    this.allowance.onRefusal?.(this.refusal);
    return this.refusal;
  }
}
