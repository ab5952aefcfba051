import { LRUCache } from 'lru-cache';
import type { AbortWatch } from './scope';

/**
 * Who asks for a turn: a key (an identity), how many turns it may hold at once, its weight in the
 * fair share, and whether it belongs to the class held to a share while others wait.
 */
export interface Claimant {
  key: string;
  /** Turns the key may hold at once. */
  max: number;
  /** Its share of the turns against other keys waiting: a key of weight 4 is served 4 turns to 1's one. */
  weight: number;
  /** Of the capped class: together they hold at most `cappedShare` of the turns while anyone else waits. */
  capped: boolean;
}

/** Turns are handed out fairly: `capacity` at once in all, the class share, and a clock. */
export interface FairTurnsOptions {
  /** The capped class's share of `capacity` while others wait (at least one turn). */
  cappedShare: number;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
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
  /** True when its class share, not only its weight, bounds it. */
  classCapped: boolean;
  /** Turns in all, and the class share's bound in turns. */
  capacity: number;
  cappedLimit: number;
}

interface Waiter {
  grant: () => void;
  seq: number;
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
 * proportion to its weight against the other keys waiting, up to its own `max` at once, and the
 * capped class (anonymous clients) holds at most its share while anyone else waits. A freed turn
 * goes straight to the next waiter in that order; within one key, in order of arrival. Work
 * conserving: a turn is never left free while a waiter may take it.
 *
 * The order is start-time fair queuing: each key's next turn starts, in virtual time, where its
 * last one finished or at the current virtual time if later, and a turn lasts 1/weight. A key
 * that has just come is therefore next, whatever the backlog of the others.
 */
export class FairTurns {
  private readonly flows = new Map<string, Flow>();
  private readonly now: () => number;
  private taken = 0;
  private cappedHeld = 0;
  private virtualTime = 0;
  private seq = 0;
  /** Turns given back so far: a waiter that sees this move knows turns are moving. */
  private returned = 0;
  /** Smoothed milliseconds a turn is held, over every key, and how many were measured. */
  private holdMs?: number;
  private measured = 0;
  /** The hold times of keys holding nothing now, for when they come back. */
  private readonly recentHolds = new LRUCache<string, number>({ max: REMEMBERED_KEYS });

  readonly cappedLimit: number;

  constructor(
    readonly capacity: number,
    options: FairTurnsOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.cappedLimit = Math.max(1, Math.floor(capacity * options.cappedShare));
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
        // Leaving may let the capped class in again.
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
        leave();
        reject(new TurnWaitTimeout(timeoutMs, this.returned !== returnedBefore, ownRan));
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
    let cappedWeights = claimant.capped ? claimant.weight : 0;
    let uncappedWaiting = false;
    for (const other of this.flows.values()) {
      if (other.claimant.key === claimant.key) continue;
      others += 1;
      weights += other.claimant.weight;
      if (other.claimant.capped) cappedWeights += other.claimant.weight;
      else if (other.waiting.length > 0) uncappedWaiting = true;
    }
    const basis = { ahead, others, capacity: this.capacity, cappedLimit: this.cappedLimit };
    if (ahead === 0 && this.mayStart(flow ?? { claimant, held: 0, waiting: [], finish: 0, grants: 0 })) {
      return { ...basis, waitMs: 0, ownWaitMs: 0, share: claimant.max, classCapped: false };
    }
    let share = Math.min(claimant.max, (this.capacity * claimant.weight) / weights);
    const classCapped = claimant.capped && uncappedWaiting && (this.cappedLimit * claimant.weight) / cappedWeights < share;
    if (classCapped) share = (this.cappedLimit * claimant.weight) / cappedWeights;
    const holdMs = flow?.holdMs ?? this.recentHolds.get(claimant.key) ?? (this.measured >= SETTLED_AFTER ? this.holdMs! : 0);
    const turnoverMs = (this.holdMs ?? 0) / this.capacity;
    const ownWaitMs = (ahead * holdMs) / share;
    return { ...basis, waitMs: turnoverMs + ownWaitMs, ownWaitMs, share, classCapped };
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

  /** A turn is free, the key is under its own bound, and its class under its share or nobody else waits. */
  private mayStart(flow: Flow, uncappedWaits = () => this.uncappedMayStart()): boolean {
    if (this.taken >= this.capacity || flow.held >= flow.claimant.max) return false;
    if (!flow.claimant.capped || this.cappedHeld < this.cappedLimit) return true;
    return !uncappedWaits();
  }

  /** Someone outside the capped class waits and could start if a turn were free. */
  private uncappedMayStart(): boolean {
    for (const flow of this.flows.values()) {
      if (!flow.claimant.capped && flow.waiting.length > 0 && flow.held < flow.claimant.max) return true;
    }
    return false;
  }

  private grant(flow: Flow): () => void {
    const start = Math.max(this.virtualTime, flow.finish);
    flow.finish = start + 1 / flow.claimant.weight;
    this.virtualTime = start;
    flow.held += 1;
    flow.grants += 1;
    this.taken += 1;
    if (flow.claimant.capped) this.cappedHeld += 1;
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
      if (flow.claimant.capped) this.cappedHeld -= 1;
      this.returned += 1;
      this.dispatch();
      this.dropIfIdle(flow);
    };
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
      let uncapped: boolean | undefined;
      const uncappedWaits = () => (uncapped ??= this.uncappedMayStart());
      for (const flow of this.flows.values()) {
        if (flow.waiting.length === 0 || !this.mayStart(flow, uncappedWaits)) continue;
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
