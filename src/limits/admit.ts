import { setTimeout as delay } from 'node:timers/promises';
import type { Scope } from '../common/scope';
import { boundedCache } from '../common/bounded-cache';
import { inTrace, type Trace } from '../common/trace';
import type { ApiError } from '../errors';
import type { Logger } from '../logger';
import { banned, inFlightFull, instanceBusy, instanceLagging, overWindow } from '../refusals';
import type { QuotedCaller } from './identity';
import { type Admission, InFlight } from './in-flight';
import type { Decision, RateLimiter, Refusal } from './limiter';
import type { Quota } from './quota';
import type { TurnShare } from './turn-share';

/** Where refusals are counted (the gateway's metrics). */
export interface RefusalObserver {
  observeRefusal(reason: 'limited' | 'banned' | 'in-flight' | 'shed', banStarted: boolean): void;
}

/** Where refusals and waits for an in-flight slot are counted. */
export interface AdmissionObserver extends RefusalObserver {
  observeAdmissionWait(): void;
}

/**
 * What the admission step decided about one request. `decision` is the limiter's word (for the
 * rate-limit headers and the `rateLimit` query); `refusal` the error to answer with. Neither, with
 * limits on: the client went away while its request waited, and nothing is to be answered.
 */
export interface Admitted {
  decision?: Decision;
  refusal?: ApiError;
}

const UNLIMITED: Admitted = Object.freeze({});

/**
 * A client is shed by a busy event loop, or by its class's spent database time (low priorities
 * only), only once it has this many other requests on the instance: a crowd member keeping its
 * bound in flight is, a visitor reading one page at a time, a steady client that met one refusal,
 * or a browser page's first few parallel queries, is not.
 */
export const CROWDING_REQUESTS = 4;

/**
 * The longest a shed request is held (untilRetryAfter), whatever its Retry-After: a client that
 * resends at once gets an answer a second, and a refusal is never so late it looks like a hang.
 */
const SHED_HOLD_MAX_MS = 1_000;

/** Identities whose last shed answer is remembered (an LRU): a crowd's members, not every client seen. */
const SHED_IDENTITIES = 10_000;

export interface AdmitterOptions<C extends QuotedCaller> {
  limiter: RateLimiter;
  metrics: AdmissionObserver;
  logger: Logger;
  /** The plans' word on how much a caller may send. */
  quotaOf: (caller: C) => Quota;
  /** Requests in flight per identity; absent, unbounded. */
  admissionOf?: (caller: C) => Admission;
  /** The instance's requests in flight at which the caller's are shed (null: never); absent, none are. */
  shedAtOf?: (caller: C) => number | null;
  /**
   * How late the instance's event loop runs now (ms), and the delay at which the caller's requests
   * are shed (null: never); absent, none are shed for it. `turns`: the loop's turns, which the
   * callers it may shed (the low priorities) share: their requests wait there for one, and the
   * wait counts as the loop's delay for them.
   */
  loopDelay?: { ms: () => number; shedAtOf: (caller: C) => number | null; turns?: TurnShare };
  /**
   * What the caller's next statement would meet now for its class (the unpaid classes' database
   * time spent), for a crowding caller to be refused at once; absent, or undefined, nothing.
   */
  unpaidRefusalOf?: (caller: C) => ApiError | undefined;
  banPauseMs?: number;
  /** False: nothing is counted or refused (the bench measures the gateway without its limiter). */
  limiting?: boolean;
}

/**
 * Admits requests of any transport (docs/contract.md §5). Each request counts once against its
 * identity's windows. Past the identity's requests in flight on this instance, a request waits
 * for a slot; when the wait runs out it is refused 429 RATE_LIMITED with Retry-After 1, counting
 * nothing and never toward a ban. Over a window: 429 RATE_LIMITED; banned: 403 API_KEY_BANNED or
 * CLIENT_BANNED, answered after `banPauseMs`, so that a client that ignores Retry-After cannot
 * turn cheap refusals into load (its paused requests hold their in-flight slots). An in-flight
 * slot belongs to the request's scope, which gives it back however the request ends. Before all
 * that, when the instance already holds as many requests in flight as it keeps for the caller's
 * priority, or its event loop runs later than it keeps for that priority, or its class's database
 * time is spent, while the caller has CROWDING_REQUESTS others on it, the request is shed: 503
 * SERVICE_UNAVAILABLE with Retry-After, counting nothing. First of all, a low-priority request
 * waits for its turn of the event loop, and how long it waited counts as the loop's lateness for
 * it. Nothing waits past the moment it can be decided: a request over a window or banned is
 * answered at once (a ban's pause aside), whatever its client sent before.
 */
export class Admitter<C extends QuotedCaller = QuotedCaller> {
  private readonly inFlight: InFlight;
  /** When each identity was last told it was shed (answered at once), by the limiter's clock. */
  private readonly lastShed = boundedCache<string, number>(SHED_IDENTITIES);
  /** When each connection was last answered a shed, by the limiter's clock. */
  private readonly shedOnConnection = new WeakMap<object, number>();
  /** Each identity's shed requests held now (untilRetryAfter): they are still its requests on the instance. */
  private readonly held = new Map<string, number>();

  constructor(private readonly options: AdmitterOptions<C>) {
    this.inFlight = new InFlight(() => options.metrics.observeAdmissionWait());
  }

  /**
   * An HTTP request (GraphQL, REST): every step. Never rejects for a refusal: the answer says what
   * to send. The request's in-flight slot is registered on `scope` as it is taken; a scope aborted
   * while waiting gets `{}`. `connection`: what the request came on (its socket), for a shed's hold.
   */
  admit(caller: C, identity: string, scope: Scope, sentAt?: number, connection?: object): Promise<Admitted> {
    return this.pass(caller, identity, scope.trace, { scope, connection }, sentAt);
  }

  /**
   * The limiter's clock: read as a request arrives, before its caller is identified, it is the
   * request's `sentAt` (a request whose key was being looked up was still sent with its burst).
   */
  now(): number {
    return this.options.limiter.now();
  }

  /**
   * A subscribe (over WebSocket or SSE), or a socket's invalid key: the same steps but the
   * in-flight slot and the ban's pause, which a long-lived connection's own bounds replace.
   */
  admitSubscribe(caller: C, identity: string, trace?: Trace): Promise<Admitted> {
    return this.pass(caller, identity, trace);
  }

  /**
   * A long-lived connection as it opens (a WebSocket at `connection_init`, an SSE stream before its
   * first byte), which counts nothing of its own: its subscribes do. A connection with an invalid
   * key (`unverified`) is counted against its address, as an HTTP request with one is, then
   * refused: the admission's refusal if it has one, else `unverified` (401). A banned identity is
   * refused with the ban's code and its end.
   */
  async admitConnection(caller: C, identity: string, unverified: ApiError | undefined, trace?: Trace): Promise<Admitted> {
    if (unverified) {
      const counted = await this.pass(caller, identity, trace);
      return { decision: counted.decision, refusal: counted.refusal ?? unverified };
    }
    const bannedUntil = await inTrace(trace, () => this.bannedUntil(identity));
    return bannedUntil === null ? UNLIMITED : { refusal: banned(caller, bannedUntil) };
  }

  /**
   * The steps of every transport, in order: a turn of the event loop (the low priorities wait
   * for one, TurnShare), shed by priority, then (a request of its own, with
   * its `request` scope) a slot among the identity's requests in flight, then the windows and the
   * ban, all in the limiter's one decision.
   */
  private async pass(caller: C, identity: string, trace: Trace | undefined, http?: { scope: Scope; connection?: object }, sentAt?: number): Promise<Admitted> {
    const request = http?.scope;
    const { limiter, admissionOf, limiting = true, banPauseMs = 0 } = this.options;
    if (!limiting) return UNLIMITED;
    // Read before any wait for a slot: a request queued behind a burst was still sent with it.
    sentAt ??= limiter.now();
    const { loopDelay } = this.options;
    const shedAtDelay = loopDelay?.shedAtOf(caller) ?? null;
    // A low priority's turn of the event loop: none to wait for (0), or the ms it waited.
    const turn = (shedAtDelay !== null && loopDelay!.turns?.take()) || 0;
    const waitedMs = typeof turn === 'number' ? turn : await turn;
    if (request?.aborted) return {};
    const shed = this.shed(caller, identity, shedAtDelay, waitedMs);
    if (shed) {
      this.options.metrics.observeRefusal('shed', false);
      if (http) await this.untilRetryAfter(identity, sentAt, Math.min((shed.retryAfterSeconds ?? 1) * 1000, SHED_HOLD_MAX_MS), http.scope, http.connection);
      return { refusal: shed };
    }
    const quota = this.options.quotaOf(caller);
    if (request && admissionOf) {
      const admission = admissionOf(caller);
      if (!(await this.inFlight.enter(identity, admission, request))) {
        if (request.aborted) return {};
        const { windows, reported, decidedAt } = await inTrace(trace, () => limiter.peek(identity, quota));
        const refused = inFlightFull(admission.max);
        const decision: Refusal = { windows, reported, decidedAt, kind: 'limited', retryAfterSeconds: refused.retryAfterSeconds ?? 1 };
        this.options.metrics.observeRefusal('in-flight', false);
        return { decision, refusal: refused };
      }
    }
    const decision = await inTrace(trace, () => limiter.check(identity, quota, sentAt));
    if (decision.kind === 'allowed') return { decision };
    if (request && decision.kind === 'banned' && banPauseMs > 0) await delay(banPauseMs, undefined, { signal: request.signal }).catch(() => undefined);
    return { decision, refusal: refusal(decision, caller, identity, this.options.metrics, this.options.logger) };
  }

  /**
   * The refusal of a request the instance sheds for its priority, before anything is spent on it
   * (no slot, no look-up in the limiter's store); undefined when it goes on. `shedAtDelay`: the
   * loop's delay at which the caller is shed (null: never), `waitedMs` its wait for a turn.
   */
  private shed(caller: C, identity: string, shedAtDelay: number | null, waitedMs: number): ApiError | undefined {
    const shedAt = this.options.shedAtOf?.(caller);
    if (shedAt != null) {
      const { running, waiting } = this.inFlight.totals();
      if (running + waiting >= shedAt) return instanceBusy(running + waiting);
    }
    const { loopDelay, unpaidRefusalOf } = this.options;
    if ((!loopDelay && !unpaidRefusalOf) || this.presentOf(identity) < CROWDING_REQUESTS) return undefined;
    if (shedAtDelay !== null) {
      const lateMs = Math.max(loopDelay!.ms(), waitedMs);
      if (lateMs >= shedAtDelay) return instanceLagging(lateMs);
    }
    // Refused now, counting nothing, rather than counted and refused after its wait.
    return unpaidRefusalOf?.(caller);
  }

  /**
   * A request shed again after its identity was told to retry in `retryAfterMs` (at most a
   * second), sent before that time ended, is answered when it ends (sooner if its client goes); so
   * is one sent on a connection within `retryAfterMs` of that connection's last shed: a crowd that
   * resends at once costs the instance one answer per second and connection, not one per turn of
   * its loop. The first shed of each such time is answered at once, and so is a request sent
   * before it.
   */
  private async untilRetryAfter(identity: string, sentAt: number, retryAfterMs: number, request: Scope, connection?: object): Promise<void> {
    const told = this.lastShed.get(identity);
    const identityFree = told === undefined || sentAt >= told + retryAfterMs;
    if (identityFree) this.lastShed.set(identity, this.now());
    const identityUntil = identityFree || sentAt < told ? 0 : told + retryAfterMs;
    const connectionTold = connection && this.shedOnConnection.get(connection);
    const until = Math.max(identityUntil, connectionTold === undefined ? 0 : connectionTold + retryAfterMs);
    if (until > this.now()) {
      this.held.set(identity, (this.held.get(identity) ?? 0) + 1);
      await delay(until - this.now(), undefined, { signal: request.signal }).catch(() => undefined);
      const left = this.held.get(identity)! - 1;
      if (left === 0) this.held.delete(identity);
      else this.held.set(identity, left);
    }
    if (connection) this.shedOnConnection.set(connection, this.now());
  }

  /** The identity's other requests on this instance: running, queued for a slot, or a shed one held. */
  private presentOf(identity: string): number {
    return this.inFlight.of(identity) + this.inFlight.waitingOf(identity) + (this.held.get(identity) ?? 0);
  }

  /**
   * Gives back what `admit` counted for a request that turned out to count nothing (answered
   * 304), and answers the decision for its rate-limit headers; undefined when nothing was counted.
   */
  async refund(identity: string, decision: Decision | undefined): Promise<Decision | undefined> {
    if (this.options.limiting === false || decision === undefined) return decision;
    return this.options.limiter.refund(identity, decision);
  }

  /** Requests holding an in-flight slot, and waiting for one, over every identity (for the metrics). */
  inFlightTotals(): { running: number; waiting: number } {
    return this.inFlight.totals();
  }

  /** When the identity's ban ends (epoch ms), or null: never banned while nothing is limited. */
  async bannedUntil(identity: string): Promise<number | null> {
    return this.options.limiting === false ? null : this.options.limiter.bannedUntil(identity);
  }
}

/**
 * What a refused request gets, over any transport: the refusal counted, a ban's start logged,
 * and the error that names it (refusals.ts).
 */
export function refusal(decision: Refusal, caller: QuotedCaller, identity: string, metrics: RefusalObserver, logger: Logger): ApiError {
  metrics.observeRefusal(decision.kind, decision.kind === 'banned' && decision.banStarted);
  if (decision.kind === 'limited') return overWindow(decision.reported.limit, decision.reported.name, decision.retryAfterSeconds);
  if (decision.banStarted) logger.warn({ identity, bannedUntil: new Date(decision.bannedUntil) }, 'ban started');
  return banned(caller, decision.bannedUntil, decision.retryAfterSeconds);
}
