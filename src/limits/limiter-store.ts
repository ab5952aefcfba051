import type { WindowName, WindowSpec, WindowState } from './window';

/** How many refusals an identity may collect while rate limited before a ban, and the ban's length. */
export interface BanPolicy {
  /** Refused requests answered `limited`; the next refusal starts a ban. 0: the first refusal bans. */
  threshold: number;
  durationMs: number;
}

export type StoreOutcome =
  | { kind: 'allowed'; windows: WindowState[] }
  | { kind: 'limited'; windows: WindowState[]; refusedBy: WindowName }
  | { kind: 'banned'; windows: WindowState[]; bannedUntil: number };

export type StoreStatus = 'ok' | 'degraded';

/**
 * Where counts, refusals and bans live. Every store implements the same state machine, checked
 * by one contract suite (test/limits/store-contract.cases.ts):
 *
 * - each window keeps a count and a reset time; it starts at the first counted request while it
 *   is not running and frees at its reset time (`now >= resetAt`);
 * - a request is counted in every window or in none: only when all have room;
 * - a refusal is reported against the full window that frees last, and adds one to a refusal
 *   count that lives until that window frees; the refusal that takes the count past the
 *   threshold starts a ban instead and clears the count, so each ban is earned afresh;
 * - a refusal counts toward a ban only when it is the first of its run, or its request was sent
 *   (`sentAt`) at or after that first refusal was decided: a request sent before its client could
 *   have been told did not keep sending while limited;
 * - during a ban nothing is counted, refused or lengthened.
 *
 * `now` always comes from the caller, so that every instance and every test agrees on the clock.
 */
export interface LimiterStore {
  /**
   * One atomic step: ban check, window check, then counting or refusal bookkeeping. `sentAt`
   * (at most `now`, by default `now`) is when the request reached the gateway.
   */
  hit(identity: string, windows: WindowSpec[], now: number, ban: BanPolicy, sentAt?: number): Promise<StoreOutcome>;
  /**
   * Gives back one request counted in each of `counted` (the windows as a hit reported them), in
   * each still in the same run (same reset time) and above zero; the windows as they then stand.
   * A window that freed or restarted since keeps its count: the request was not counted there.
   * Each window gives back at most its limit in one run (an identity's per-minute quota a minute,
   * docs/contract.md §10); once one of them has, nothing is given back and the request counts.
   */
  refund(identity: string, counted: WindowState[], now: number): Promise<WindowState[]>;
  /** The windows as they stand, counting nothing. */
  peek(identity: string, windows: WindowSpec[], now: number): Promise<WindowState[]>;
  /** When the identity's ban ends, or null when it is not banned. */
  bannedUntil(identity: string, now: number): Promise<number | null>;
  /** Lifts a ban and forgets the refusals; the windows keep their counts. */
  unban(identity: string): Promise<void>;
  /** Bans until `untilMs` unless a ban that ends later stands: carries a ban from another store. */
  ban(identity: string, untilMs: number, now: number): Promise<void>;
}
