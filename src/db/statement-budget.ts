import type { AbortWatch, Scope } from '../common/scope';
import type { Trace } from '../common/trace';
import { ApiError, type RequestRefusal } from '../errors';
import { type Claimant, type FairTurns, TurnWaitTimeout } from '../common/fair-turns';
import { databaseBusy, databaseSaturated, overDatabaseShare, ownStatementsHeld } from '../refusals';
import { DatabaseNotAnswering } from '../sql/pg-errors';
import type { Budget } from '../sql/statements';
import { type ClassDatabaseTime, classTimeSpent, classWaitOf } from './class-database-time';
import type { DatabaseTime } from './database-time';

/**
 * What one request may ask of the database (docs/contract.md §5): statements in all, and at
 * once. No query within the cost limit comes near the total (an unbatched statement costs at
 * least 10). Statements at once are bounded per identity, over all its requests in flight: one
 * client's scans cannot take every connection, nor every core of the database.
 */
export const STATEMENTS_PER_REQUEST = 200;

/** What one request's statements may use: their identity's turns of the pool and database time. */
export interface StatementAllowance {
  /** The pool's connections, handed out fairly across identities (FairTurns). */
  turns: FairTurns;
  /** The identity's claim: its key, statements at once, weight and class. */
  claimant: Claimant;
  /**
   * A request whose first statements could not start within this is refused at once rather than
   * queued (the identity's plan); absent, never refused early.
   */
  startWithinMs?: number;
  /** How long a statement waits for its turn (DATABASE_STATEMENT_TIMEOUT_MS). */
  waitMs: number;
  /** The identity's database time, and how much of it it may use a minute. */
  time?: { meter: DatabaseTime; identity: string; allowanceMs: number };
  /**
   * The database time of the classes the identity is in (FREE keys and anonymous clients
   * together, anonymous clients alone), each bucket checked before a statement and charged after
   * it; empty or absent for the paying class.
   */
  classTime?: ClassDatabaseTime[];
  /** Statements in all. */
  total?: number;
  /** Told of the request's refusal, once. */
  onRefusal?: (refusal: RequestRefusal) => void;
  /**
   * The request's scope: a wait for a turn ends when its client goes, running statements are
   * cancelled, and no turn outlives the request.
   */
  scope?: Scope;
}

/**
 * One request's allowance. A statement here is a checkout of a pool connection (sql/statements.ts):
 * one statement for every read, one for a whole transaction. Its turn of the pool comes first,
 * so that pg's pool, first come first served, never has a queue of its own to wait in.
 */
export class StatementBudget implements Budget {
  private used = 0;
  private started = false;
  private refusal?: RequestRefusal;
  /** Ends when the request is refused, or its client goes: its statements waiting leave at once. */
  private readonly waits: RequestWaits;
  readonly total: number;

  constructor(private readonly allowance: StatementAllowance) {
    this.total = allowance.total ?? STATEMENTS_PER_REQUEST;
    this.waits = new RequestWaits(allowance.scope);
  }

  /** Aborted when the request's client goes: its running statements are cancelled. */
  get client(): AbortWatch | undefined {
    return this.allowance.scope;
  }

  /** The request's trace, when it is traced: its statements are the trace's children. */
  get trace(): Trace | undefined {
    return this.allowance.scope?.trace;
  }

  /** Takes one statement, waiting for its turn; the returned function gives the turn back. */
  async acquire(): Promise<() => void> {
    // Once refused, the request's other statements are refused at once rather than queued.
    if (this.refusal) throw this.refusal;
    if (this.used >= this.total) {
      throw new ApiError('QUERY_TOO_COMPLEX', `This request has run the ${this.total} database statements a request may run; ask for less at once`);
    }
    this.used += 1;
    const { time, turns, claimant, startWithinMs, waitMs: timeoutMs, scope } = this.allowance;
    const waitMs = time ? time.meter.waitMs(time.identity, time.allowanceMs) : 0;
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      throw this.refuse(databaseBusy(`This client has used its ${time!.allowanceMs / 1000} s of database time a minute; retry in ${seconds} s`, seconds));
    }
    // Awaited only when there is a wait: a statement otherwise joins the pool's line in this step.
    const classWait = this.waitForClassTime();
    if (classWait) await classWait;
    // Until one of its statements has started, a request that could not start soon while others
    // compete for the pool is refused whole; once one has, the rest are let finish what it began.
    let bounded = false;
    if (!this.started && startWithinMs !== undefined) {
      const outlook = turns.outlook(claimant);
      // Only its own statements ahead refuse it at once: a pool merely slow for everyone is
      // judged by the wait itself (below), not by an estimate of it.
      if (outlook.others > 0 && outlook.ahead > 0 && outlook.waitMs > startWithinMs) throw this.refuse(overDatabaseShare(outlook));
      // Nor does it wait longer than it was expected to: the estimate may be wrong.
      bounded = outlook.others > 0 && startWithinMs < timeoutMs;
    }
    try {
      // Unbounded, a statement held back by the pool alone (not by its client's own bound) waits
      // on, as it would in the pool's queue.
      const free = await turns.take(claimant, bounded ? startWithinMs : timeoutMs, this.waits, { ownBoundOnly: !bounded });
      this.started = true;
      return scope ? scope.defer(free) : free;
    } catch (error) {
      if (!(error instanceof TurnWaitTimeout)) throw error;
      // The cause is named: the client's own statements ran ahead of it while the pool's turns
      // moved (429), or the pool was busy with others' (503). None finished in a whole statement
      // timeout: the database is not answering (503, as for the statements ahead).
      if (error.ownRan && error.turnedOver) throw this.refuse(ownStatementsHeld(error.timeoutMs, claimant.max));
      if (!error.turnedOver && !bounded) throw new DatabaseNotAnswering(error.timeoutMs);
      throw this.refuse(databaseSaturated(error.timeoutMs, true, turns.capacity, error.classBound));
    }
  }

  /** Charges the identity, and its classes, for `ms` a statement held its connection. */
  charge(ms: number): void {
    const { time, classTime } = this.allowance;
    time?.meter.spend(time.identity, time.allowanceMs, ms);
    if (classTime) for (const bucket of classTime) bucket.spend(ms);
  }

  /**
   * Waits while the database time of the identity's classes is spent: a request none of whose
   * statements has started at most its plan's start bound, one under way at most the statement
   * timeout. Longer, and the request is refused 503 at once, the class's wait being what it is.
   */
  private waitForClassTime(): Promise<void> | undefined {
    const { classTime } = this.allowance;
    if (!classTime?.length || classTime.every((bucket) => bucket.waitMs() === 0)) return undefined;
    return this.waitForClassTimeOf(classTime);
  }

  private async waitForClassTimeOf(classTime: ClassDatabaseTime[]): Promise<void> {
    const { startWithinMs, waitMs: timeoutMs } = this.allowance;
    const limit = this.started ? timeoutMs : Math.min(startWithinMs ?? timeoutMs, timeoutMs);
    let waited = 0;
    for (;;) {
      const { waitMs, binding } = classWaitOf(classTime);
      if (waitMs === 0) return;
      if (waited + waitMs > limit) throw this.refuse(classTimeSpent(classTime, binding, waitMs));
      await sleepUnless(waitMs, this.waits);
      waited += waitMs;
    }
  }

  /**
   * The request's refusal: its statements waiting at once are all refused (they leave the queue
   * now), but it is reported once.
   */
  private refuse(refusal: RequestRefusal): RequestRefusal {
    if (this.refusal) return this.refusal;
    this.refusal = refusal;
    this.waits.end(refusal);
    this.allowance.onRefusal?.(refusal);
    return refusal;
  }
}


/**
 * The end of a request's waits for a turn: its refusal, or its client's going. Made of plain
 * listeners, not an AbortController: every request has one, and few ever wait.
 */
class RequestWaits implements AbortWatch {
  private refusal?: RequestRefusal;
  private listeners?: Set<() => void>;

  constructor(private readonly scope?: AbortWatch) {}

  get aborted(): boolean {
    return this.refusal !== undefined || this.scope?.aborted === true;
  }

  get reason(): unknown {
    return this.refusal ?? this.scope?.reason;
  }

  onAbort(listener: () => void): () => void {
    let called = false;
    const once = () => {
      if (called) return;
      called = true;
      stop();
      listener();
    };
    const stopScope = this.scope?.onAbort(once);
    (this.listeners ??= new Set()).add(once);
    const stop = () => {
      this.listeners?.delete(once);
      stopScope?.();
    };
    return stop;
  }

  /** The request was refused: every statement still waiting leaves now. */
  end(refusal: RequestRefusal): void {
    if (this.aborted) return;
    this.refusal = refusal;
    const listeners = this.listeners;
    this.listeners = undefined;
    listeners?.forEach((listener) => listener());
  }
}

/** Resolves after `ms`, or rejects with the watch's reason once it is aborted (a refusal, the client gone). */
function sleepUnless(ms: number, watch: AbortWatch): Promise<void> {
  if (watch.aborted) return Promise.reject(watch.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      resolve();
    }, ms);
    const stop = watch.onAbort(() => {
      clearTimeout(timer);
      reject(watch.reason);
    });
  });
}
