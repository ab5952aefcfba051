/**
 * The rate-limit policy (docs/contract.md §5), in one place for GraphQL and REST.
 *
 *   const { store, fieldStore, close } = await createLimiterStore({ redis, logger, prefix });
 *   const limiter = new RateLimiter(store, { threshold: 10, durationMs: 900_000 });
 *   const decision = await limiter.check(identityOf(caller), quotaOfCaller(caller));
 *   res.set(rateLimitHeaders(decision));
 *   if (decision.kind === 'limited') → 429 RATE_LIMITED; if 'banned' → 403 API_KEY_BANNED / CLIENT_BANNED
 *
 *   limiter.refund(identity, decision) → the decision with its count given back (a 304 counts nothing)
 *   limiter.peek(identity, quota)   → QuotaView, counting nothing (the `rateLimit` query)
 *   limiter.bannedUntil(identity)   → epoch ms or null (an API key's `bannedUntil`)
 *   limiter.unban(identity)         → lifts the ban and forgets the refusals, not the windows
 *   store.status()                  → 'ok' | 'degraded' (for /readyz)
 *   createFieldLimiter(fieldStore).limit(identity, 'placeOrder', { max: 10, windowMs: 60_000 })
 *                                   → undefined, or the refusal message (field-limiter.ts)
 *
 * - An identity has a minute and a day window (window.ts), each starting at its first counted
 *   request and freeing exactly `lengthMs` later. A request is accepted only when both have
 *   room, and then counts once in both; a refused request counts in neither.
 * - `reported` is the window the X-RateLimit-* headers describe: the refusing window on
 *   `limited`, otherwise the one that will run out first (fewest left, then earliest reset).
 * - A refusal names the full window that frees last. Refusals 1..threshold are `limited`; the
 *   next starts a ban of `durationMs` and is `banned`, as is every request during the ban, which
 *   nothing lengthens. Only refusals of requests sent once the client could have been told
 *   count. The refusal count restarts when the refusing window frees, and when a ban starts
 *   (each ban is earned afresh). limiter-store.ts has the state machine.
 * - `reported` on a ban is the window that runs out first, as for an accepted request.
 * - `retryAfterSeconds` is whole seconds, rounded up and at least 1: until the refusing window
 *   frees on `limited`, until the ban ends on `banned`.
 *
 * The store does the counting atomically; this class only turns its outcome into a Decision.
 * Nothing here throws for a refusal: callers switch on `kind`.
 */
import type { BanPolicy, LimiterStore } from './limiter-store';
import type { Quota } from './quota';
import { firstToRunOut, type WindowState, windowsFor } from './window';

interface DecisionBase {
  windows: WindowState[];
  /** The window for X-RateLimit-Limit, -Remaining and -Reset (and the `rateLimit` query). */
  reported: WindowState;
  /** The clock reading the decision was made at, so that headers need no clock of their own. */
  decidedAt: number;
}

export type Decision =
  | (DecisionBase & { kind: 'allowed' })
  | (DecisionBase & { kind: 'limited'; retryAfterSeconds: number })
  | (DecisionBase & { kind: 'banned'; retryAfterSeconds: number; bannedUntil: number; banStarted: boolean });

export type Refusal = Exclude<Decision, { kind: 'allowed' }>;

/** The caller's quota as it stands, counting nothing. */
export interface QuotaView {
  windows: WindowState[];
  reported: WindowState;
  bannedUntil: number | null;
  decidedAt: number;
}

export class RateLimiter {
  constructor(
    private readonly store: LimiterStore,
    private readonly ban: BanPolicy,
    private readonly clock: () => number = Date.now,
  ) {}

  /** `sentAt`: when the request reached the gateway (`now()`), for the ban's count; by default now. */
  async check(identity: string, quota: Quota, sentAt?: number): Promise<Decision> {
    const now = this.clock();
    const outcome = await this.store.hit(identity, windowsFor(quota), now, this.ban, sentAt ?? now);
    const base = { windows: outcome.windows, decidedAt: now };
    switch (outcome.kind) {
      case 'allowed':
        return { ...base, kind: 'allowed', reported: firstToRunOut(outcome.windows) };
      case 'limited': {
        const reported = outcome.windows.find((w) => w.name === outcome.refusedBy);
        if (!reported) throw new Error(`expected a refusing window among the windows, got ${outcome.refusedBy}`);
        return { ...base, kind: 'limited', reported, retryAfterSeconds: secondsUntil(reported.resetAt, now) };
      }
      case 'banned':
        return {
          ...base,
          kind: 'banned',
          reported: firstToRunOut(outcome.windows),
          bannedUntil: outcome.bannedUntil,
          // A ban started by this very request ends exactly one ban length from now.
          banStarted: outcome.bannedUntil === now + this.ban.durationMs,
          retryAfterSeconds: secondsUntil(outcome.bannedUntil, now),
        };
    }
  }

  /**
   * Gives back the request an `allowed` decision counted, in each window still in the run it was
   * counted in, and answers the decision as the windows then stand: a request answered
   * `304 Not Modified` counts nothing (docs/contract.md §10). A refusal counted nothing to give back.
   */
  async refund(identity: string, decision: Decision): Promise<Decision> {
    if (decision.kind !== 'allowed') return decision;
    const now = this.clock();
    const windows = await this.store.refund(identity, decision.windows, now);
    return { kind: 'allowed', windows, reported: firstToRunOut(windows), decidedAt: now };
  }

  async peek(identity: string, quota: Quota): Promise<QuotaView> {
    const now = this.clock();
    const [windows, bannedUntil] = await Promise.all([
      this.store.peek(identity, windowsFor(quota), now),
      this.store.bannedUntil(identity, now),
    ]);
    return { windows, reported: firstToRunOut(windows), bannedUntil, decidedAt: now };
  }

  bannedUntil(identity: string): Promise<number | null> {
    return this.store.bannedUntil(identity, this.clock());
  }

  /** The limiter's clock, for a request's `sentAt`. */
  now(): number {
    return this.clock();
  }

  /** Lifts a ban and forgets the refusals that led to it; the windows keep their counts. */
  unban(identity: string): Promise<void> {
    return this.store.unban(identity);
  }
}

/** Whole seconds until `at`, rounded up, and never 0: "retry after 0 s" invites a busy loop. */
export function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
