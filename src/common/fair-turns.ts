import { boundedCache } from './bounded-cache';
import type { AbortWatch } from './scope';

/**
 * A claimant's class. `paying` takes any turn; `free` and `anonymous` together are the unpaid
 * class, which never holds the turns reserved for the paying one, and holds less while a paying
 * claimant waits; `anonymous` alone holds less again while any other claimant waits.
 */
export type Tier = 'paying' | 'free' | 'anonymous';

/**
 * Who asks for a turn: a key (an identity), how many turns it may hold at once, its weight in the
 * fair share, and its class.
 */
export interface Claimant {
  key: string;
  /** Turns the key may hold at once. */
  max: number;
  /** Its share of the turns against other keys waiting: a key of weight 4 is served 4 turns to 1's one. */
  weight: number;
  tier: Tier;
}

/** Turns are handed out fairly: `capacity` at once in all, the classes' bounds, and a clock. */
export interface FairTurnsOptions {
  /** Turns the unpaid class never holds, kept for the paying one (the unpaid class keeps at least one turn). */
  reserve?: number;
  /** The unpaid class's share of `capacity` while a paying claimant waits (at least one turn). */
  unpaidShare?: number;
  /** The anonymous class's share of `capacity` while a claimant of another class waits (at least one turn). */
  anonymousShare: number;
  /** The most turns the unpaid class holds at once, whatever else is free (at least one); absent, no such bound. */
  unpaidMax?: number;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
}

/** A class's bound on the turns it holds together, in force for a claimant now. */
export interface ClassBound {
  /** Whose: the unpaid class (FREE and anonymous), or the anonymous class alone. */
  tier: 'unpaid' | 'anonymous';
  /** Turns the class may hold now. */
  limit: number;
  /** Why it holds no more: the reserve, a paying claimant waiting, any other claimant waiting, or the unpaid class's `unpaidMax`. */
  because: 'reserve' | 'paying waits' | 'others wait' | 'unpaid max';
}

/**
 * A wait for a turn that ran out. `turnedOver`: some holder gave a turn back meanwhile, so turns
 * were moving, only not to this waiter; `ownRan`: its own key held a turn during the wait (its own
 * statements ahead of it ran), rather than none at all.
 */
export class TurnWaitTimeout extends Error {
  constructor(
    readonly timeoutMs: number,
    readonly turnedOver: boolean,
    readonly ownRan: boolean,
    /** Set when its class held all it may when the wait ran out: the cause, rather than a full pool. */
    readonly classBound?: ClassBound,
  ) {
    super(`waited ${timeoutMs} ms for a turn`);
    this.name = 'TurnWaitTimeout';
  }
}

/** What a key that asks for a turn now may expect (the figures its early refusal is decided by). */
export interface Outlook {
  /** Milliseconds until it would start: 0 when a turn is free to it now. */
  waitMs: number;
  /** Of those, what its own turns waiting ahead of it add (the rest is one turnover of the whole). */
  ownWaitMs: number;
  /** Its own turns waiting ahead of it. */
  ahead: number;
  /** The turns at once its share gives it now, possibly a fraction. */
  share: number;
  /** Other keys holding or waiting for turns: 0 when it is alone. */
  others: number;
  /** Set when its class's bound, not only its weight, bounds its share. */
  classBound?: ClassBound;
  /** Turns in all. */
  capacity: number;
}

interface Waiter {
  grant: () => void;
  seq: number;
}

/** Whether a paying key, and whether any key but an anonymous one, waits and could start. */
interface Waiters {
  paying: boolean;
  notAnonymous: boolean;
}

/** One key's turns held and waiting, its place in the fair order and how long its turns last. */
interface Flow {
  claimant: Claimant;
  held: number;
  waiting: Waiter[];
  /** Start-time fair queuing: the virtual time its last turn finished. */
  finish: number;
  /** Smoothed milliseconds its turns were held; undefined before its first. */
  holdMs?: number;
  /** Turns it has been granted while in the queue. */
  grants: number;
}

/** Weight of the newest hold in the smoothed hold time. */
const SMOOTHING = 0.2;

/** Holds measured over every key before their mean stands in for a key never measured. */
const SETTLED_AFTER = 32;

/** Keys whose hold time is remembered while they hold nothing: the most recent ones. */
const REMEMBERED_KEYS = 10_000;

/**
 * Turns of a shared resource (the database pool's connections) handed out by weighted fair
 * queuing across keys, not first come first served: a key with turns waiting is served in
 * proportion to its weight against the other keys waiting, up to its own `max` at once. Classes
 * bound that, Stripe's way of keeping capacity for critical traffic: the unpaid class (FREE keys
 * and anonymous clients) never holds the `reserve`, so a paying claimant finds a turn free at
 * once unless paying claimants hold the reserve already; while a paying claimant waits, the
 * unpaid class holds at most its `unpaidShare`, so the paying one waits at most for one turn to
 * end; and the anonymous class holds at most its `anonymousShare` while anyone else waits, so that
 * it cannot push FREE keys out. A freed turn goes straight to the next waiter in that order;
 * within one key, in order of arrival. Within those bounds work conserving: a turn is never left
 * free while a waiter may take it; the reserve alone may stay free.
 *
 * The order is start-time fair queuing: each key's next turn starts, in virtual time, where its
 * last one finished or at the current virtual time if later, and a turn lasts 1/weight. A key
 * that has just come is therefore next, whatever the backlog of the others.
 */
export class FairTurns {
  private readonly flows = new Map<string, Flow>();
  private readonly now: () => number;
  private taken = 0;
  /** Turns held by the unpaid class, and by its anonymous part. */
  private unpaidHeld = 0;
  private anonymousHeld = 0;
  private virtualTime = 0;
  private seq = 0;
  /** Turns given back so far: a waiter that sees this move knows turns are moving. */
  private returned = 0;
  /** Smoothed milliseconds a turn is held, over every key, and how many were measured. */
  private holdMs?: number;
  private measured = 0;
  /** The hold times of keys holding nothing now, for when they come back. */
  private readonly recentHolds = boundedCache<string, number>(REMEMBERED_KEYS);

  /** The unpaid class's bound at all times (capacity − reserve, or its `unpaidMax` if less), and while a paying claimant waits. */
  readonly unpaidLimit: number;
  /** That bound at all times, as a waiter held by it is told. */
  private readonly unpaidBound: ClassBound;
  readonly unpaidLimitWhilePayingWaits: number;
  /** The anonymous class's bound while a claimant of another class waits. */
  readonly anonymousLimit: number;

  constructor(
    readonly capacity: number,
    { reserve = 0, unpaidShare = 1, anonymousShare, unpaidMax = Infinity, now }: FairTurnsOptions,
  ) {
    this.now = now ?? (() => performance.now());
    this.unpaidLimit = Math.max(1, Math.min(capacity - reserve, unpaidMax));
    this.unpaidBound = { tier: 'unpaid', limit: this.unpaidLimit, because: unpaidMax < capacity - reserve ? 'unpaid max' : 'reserve' };
    this.unpaidLimitWhilePayingWaits = Math.max(1, Math.min(this.unpaidLimit, Math.floor(capacity * unpaidShare)));
    this.anonymousLimit = Math.max(1, Math.min(this.unpaidLimit, Math.floor(capacity * anonymousShare)));
  }

  /** Turns held now, over every key. */
  get held(): number {
    return this.taken;
  }

  /** Turns waited for now, over every key. */
  get waiting(): number {
    let waiting = 0;
    for (const flow of this.flows.values()) waiting += flow.waiting.length;
    return waiting;
  }

  /** Turns the key holds now. */
  heldBy(key: string): number {
    return this.flows.get(key)?.held ?? 0;
  }

  /** Turns the key waits for now. */
  waitingOf(key: string): number {
    return this.flows.get(key)?.waiting.length ?? 0;
  }

  /**
   * Waits for a turn, at most `timeoutMs` (then rejects with TurnWaitTimeout; with `ownBoundOnly`,
   * only when its key holds all it may then or no turn came back in that time), leaving the queue at once when `client` aborts
   * (rejecting with its reason); the returned function gives the turn back (once). A free turn
   * is taken before anything awaits.
   */
  take(claimant: Claimant, timeoutMs = Infinity, client?: AbortWatch, { ownBoundOnly = false } = {}): Promise<() => void> {
    if (client?.aborted) return Promise.reject(client.reason);
    const flow = this.flowOf(claimant);
    if (flow.waiting.length === 0 && this.mayStart(flow)) return Promise.resolve(this.grant(flow));
    const returnedBefore = this.returned;
    const grantsBefore = flow.grants;
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        stopListening?.();
      };
      const leave = () => {
        const at = flow.waiting.indexOf(waiter);
        if (at >= 0) flow.waiting.splice(at, 1);
        settle();
        this.dropIfIdle(flow);
        // Leaving may let a bounded class in again.
        this.dispatch();
      };
      const waiter: Waiter = {
        seq: (this.seq += 1),
        grant: () => {
          settle();
          resolve(this.grant(flow));
        },
      };
      const onAbort = () => {
        leave();
        reject(client?.reason);
      };
      let returnedAtArm = returnedBefore;
      const expire = () => {
        // Counting only waits behind its own bound: one held back by a pool that keeps turning
        // over waits on; a pool that did not move in a whole wait is not answering.
        if (ownBoundOnly && flow.held < flow.claimant.max && this.returned !== returnedAtArm) {
          returnedAtArm = this.returned;
          timer = setTimeout(expire, timeoutMs);
          return;
        }
        const ownRan = flow.held > 0 || flow.grants !== grantsBefore;
        const classBound = this.classHolding(flow.claimant, this.lazyWaiters());
        leave();
        reject(new TurnWaitTimeout(timeoutMs, this.returned !== returnedBefore, ownRan, classBound));
      };
      let timer = Number.isFinite(timeoutMs) ? setTimeout(expire, timeoutMs) : undefined;
      const stopListening = client?.onAbort(onAbort);
      flow.waiting.push(waiter);
    });
  }

  /**
   * What the key may expect if it asked for a turn now: its own turns waiting, each lasting as
   * long as its own turns have lately, at the turns at once its share gives it, after one
   * turnover of the whole. A key whose turns were never measured is taken for a typical key once
   * the pool has measured enough turns (so that a crowd arriving at once cannot all queue
   * unmeasured), and expects no wait of its own before (a cold start's first statements are slow).
   */
  outlook(claimant: Claimant): Outlook {
    const flow = this.flows.get(claimant.key);
    const ahead = flow?.waiting.length ?? 0;
    let others = 0;
    let weights = claimant.weight;
    const classWeights = { paying: 0, unpaid: 0, anonymous: 0 };
    for (const other of this.flows.values()) {
      if (other.claimant.key === claimant.key) continue;
      others += 1;
      weights += other.claimant.weight;
      if (other.claimant.tier === 'paying') classWeights.paying += other.claimant.weight;
      else classWeights.unpaid += other.claimant.weight;
      if (other.claimant.tier === 'anonymous') classWeights.anonymous += other.claimant.weight;
    }
    const basis = { ahead, others, capacity: this.capacity };
    if (ahead === 0 && this.mayStart(flow ?? { claimant, held: 0, waiting: [], finish: 0, grants: 0 })) {
      return { ...basis, waitMs: 0, ownWaitMs: 0, share: claimant.max };
    }
    let share = (this.capacity * claimant.weight) / weights;
    // The paying class waiting gets at least what the unpaid class must leave it, shared by weight.
    if (claimant.tier === 'paying') share = Math.max(share, ((this.capacity - this.unpaidLimitWhilePayingWaits) * claimant.weight) / (classWeights.paying + claimant.weight));
    share = Math.min(claimant.max, share);
    // Its class's bounds in force, shared by the class's keys in proportion to their weights.
    let classBound: ClassBound | undefined;
    for (const bound of this.classBounds(claimant.tier, this.lazyWaiters())) {
      const classShare = (bound.limit * claimant.weight) / (classWeights[bound.tier] + claimant.weight);
      if (classShare < share) [share, classBound] = [classShare, bound];
    }
    const holdMs = flow?.holdMs ?? this.recentHolds.get(claimant.key) ?? (this.measured >= SETTLED_AFTER ? this.holdMs! : 0);
    const turnoverMs = (this.holdMs ?? 0) / this.capacity;
    const ownWaitMs = (ahead * holdMs) / share;
    return { ...basis, waitMs: turnoverMs + ownWaitMs, ownWaitMs, share, classBound };
  }

  private flowOf(claimant: Claimant): Flow {
    let flow = this.flows.get(claimant.key);
    if (!flow) {
      flow = { claimant, held: 0, waiting: [], finish: this.virtualTime, holdMs: this.recentHolds.get(claimant.key), grants: 0 };
      this.flows.set(claimant.key, flow);
    }
    flow.claimant = claimant;
    return flow;
  }

  /** A turn is free, the key is under its own bound, and its class under every bound in force. */
  private mayStart(flow: Flow, waiters = this.lazyWaiters()): boolean {
    if (this.taken >= this.capacity || flow.held >= flow.claimant.max) return false;
    return this.classHolding(flow.claimant, waiters) === undefined;
  }

  /** The bound of the claimant's class that its class holds all of now, if any. */
  private classHolding(claimant: Claimant, waiters: () => Waiters): ClassBound | undefined {
    return this.classBounds(claimant.tier, waiters).find((bound) => (bound.tier === 'unpaid' ? this.unpaidHeld : this.anonymousHeld) >= bound.limit);
  }

  /** The bounds on the class of `tier` in force now: none on the paying class. */
  private classBounds(tier: Tier, waiters: () => Waiters): ClassBound[] {
    if (tier === 'paying') return [];
    const bounds: ClassBound[] = [
      waiters().paying
        ? { tier: 'unpaid', limit: this.unpaidLimitWhilePayingWaits, because: 'paying waits' }
        : this.unpaidBound,
    ];
    if (tier === 'anonymous' && waiters().notAnonymous) bounds.push({ tier: 'anonymous', limit: this.anonymousLimit, because: 'others wait' });
    return bounds;
  }

  /** waitersNow, looked up at most once, and only if a class bound asks. */
  private lazyWaiters(): () => Waiters {
    let waiters: Waiters | undefined;
    return () => (waiters ??= this.waitersNow());
  }

  /** Which classes have a key waiting that could start were a turn free (under its own bound). */
  private waitersNow(): Waiters {
    const waiters = { paying: false, notAnonymous: false };
    for (const flow of this.flows.values()) {
      if (flow.waiting.length === 0 || flow.held >= flow.claimant.max) continue;
      if (flow.claimant.tier === 'paying') waiters.paying = true;
      if (flow.claimant.tier !== 'anonymous') waiters.notAnonymous = true;
    }
    return waiters;
  }

  private grant(flow: Flow): () => void {
    const start = Math.max(this.virtualTime, flow.finish);
    flow.finish = start + 1 / flow.claimant.weight;
    this.virtualTime = start;
    flow.held += 1;
    flow.grants += 1;
    this.taken += 1;
    this.count(flow.claimant.tier, 1);
    const grantedAt = this.now();
    let returned = false;
    return () => {
      if (returned) return;
      returned = true;
      const heldMs = this.now() - grantedAt;
      flow.holdMs = flow.holdMs === undefined ? heldMs : flow.holdMs + SMOOTHING * (heldMs - flow.holdMs);
      this.holdMs = this.holdMs === undefined ? heldMs : this.holdMs + SMOOTHING * (heldMs - this.holdMs);
      this.measured += 1;
      flow.held -= 1;
      this.taken -= 1;
      this.count(flow.claimant.tier, -1);
      this.returned += 1;
      this.dispatch();
      this.dropIfIdle(flow);
    };
  }

  private count(tier: Tier, turns: number): void {
    if (tier !== 'paying') this.unpaidHeld += turns;
    if (tier === 'anonymous') this.anonymousHeld += turns;
  }

  /**
   * Hands free turns to waiters, the earliest virtual start first; among equal starts (every key
   * that has waited since before the current virtual time), the earliest finish, so the heavier
   * key, then the longest waiting.
   */
  private dispatch(): void {
    while (this.taken < this.capacity) {
      let next: Flow | undefined;
      let nextStart = Infinity;
      // Looked up once a turn, not once a key.
      const waiters = this.lazyWaiters();
      for (const flow of this.flows.values()) {
        if (flow.waiting.length === 0 || !this.mayStart(flow, waiters)) continue;
        const start = Math.max(this.virtualTime, flow.finish);
        if (start < nextStart || (start === nextStart && earlier(flow, next!))) {
          next = flow;
          nextStart = start;
        }
      }
      if (!next) return;
      next.waiting.shift()!.grant();
    }
  }

  /**
   * A key with nothing held or waiting leaves the queue: it comes back at the current virtual
   * time. Only its hold time is remembered, among the most recent keys'.
   */
  private dropIfIdle(flow: Flow): void {
    if (flow.held > 0 || flow.waiting.length > 0 || this.flows.get(flow.claimant.key) !== flow) return;
    this.flows.delete(flow.claimant.key);
    if (flow.holdMs !== undefined) this.recentHolds.set(flow.claimant.key, flow.holdMs);
  }
}

/** Of two keys starting together: the one whose turn finishes first, then the longest waiting. */
function earlier(flow: Flow, than: Flow): boolean {
  if (flow.claimant.weight !== than.claimant.weight) return flow.claimant.weight > than.claimant.weight;
  return flow.waiting[0].seq < than.waiting[0].seq;
}
