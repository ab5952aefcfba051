import type { Request, RequestHandler } from 'express';
import { ApiError } from '../errors';
import type { Logger } from '../logger';
import { identityOf, type QuotedCaller } from './identity';
import { type Admission, InFlight } from './in-flight';
import type { Decision, RateLimiter, Refusal } from './limiter';
import type { Quota } from './quota';
import { rateLimitHeaders } from './rate-limit-headers';

/** Where refusals are counted (the gateway's metrics). */
export interface RefusalObserver {
  observeRefusal(reason: 'limited' | 'banned' | 'in-flight', banStarted: boolean): void;
}

/** Where refusals and waits for an in-flight slot are counted. */
export interface AdmissionObserver extends RefusalObserver {
  observeAdmissionWait(): void;
}

/** What this step reads of a request (set by the caller's identification) and leaves on it. */
type LimitedRequest = Request & { caller?: QuotedCaller; rateLimitIdentity?: string; rateLimit?: Decision };

/**
 * Counts every API request once against its identity's windows (docs/contract.md §5) and puts the
 * rate-limit headers on the response, whatever comes of the request afterwards. Past the
 * identity's requests in flight on this instance (`admissionOf`), a request waits for a slot; when
 * the wait runs out it is refused 429 RATE_LIMITED with Retry-After 1, counting nothing and never
 * toward a ban. Over a window: 429 RATE_LIMITED; banned: 403 API_KEY_BANNED or CLIENT_BANNED,
 * answered after `banPauseMs`, so that a client that ignores Retry-After cannot turn cheap refusals
 * into load (its paused requests hold its in-flight slots). `quotaOf` and `admissionOf` are the
 * plans' word on how much a caller may send.
 */
export function limitRequests<C extends QuotedCaller = QuotedCaller>(
  limiter: RateLimiter,
  metrics: AdmissionObserver,
  logger: Logger,
  quotaOf: (caller: C) => Quota,
  admissionOf?: (caller: C) => Admission,
  banPauseMs = 0,
): RequestHandler {
  const inFlight = new InFlight(() => metrics.observeAdmissionWait());
  return async (req: LimitedRequest, res, next) => {
    const caller = (req.caller ?? { kind: 'anonymous', address: 'unknown' }) as C;
    const identity = req.rateLimitIdentity ?? identityOf(caller);
    const quota = quotaOf(caller);
    if (admissionOf) {
      const admission = admissionOf(caller);
      if (!(await inFlight.enter(identity, admission))) {
        const { windows, reported, decidedAt } = await limiter.peek(identity, quota);
        const decision: Refusal = { windows, reported, decidedAt, kind: 'limited', retryAfterSeconds: 1 };
        req.rateLimit = decision;
        res.set(rateLimitHeaders(decision));
        metrics.observeRefusal('in-flight', false);
        throw new ApiError('RATE_LIMITED', `Too many requests in flight: at most ${admission.max} at once, and none finished in time; retry in 1 s`);
      }
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        inFlight.leave(identity);
      };
      res.once('finish', leave);
      res.once('close', leave);
    }

    const decision = await limiter.check(identity, quota);
    req.rateLimit = decision;
    res.set(rateLimitHeaders(decision));
    if (decision.kind === 'allowed') return next();
    if (decision.kind === 'banned' && banPauseMs > 0) await new Promise((resolve) => setTimeout(resolve, banPauseMs));
    throw refusal(decision, caller, identity, metrics, logger);
  };
}

/**
 * What a refused request gets, over HTTP or WebSocket: the refusal counted, a ban's start logged,
 * and the error that names it. `reason` says which limit refused a RATE_LIMITED request: the
 * window that is full, unless told otherwise.
 */
export function refusal(
  decision: Refusal,
  caller: QuotedCaller,
  identity: string,
  metrics: RefusalObserver,
  logger: Logger,
  reason = decision.kind === 'limited' ? `Rate limit exceeded: ${decision.reported.limit} requests per ${decision.reported.name}` : '',
): ApiError {
  metrics.observeRefusal(decision.kind, decision.kind === 'banned' && decision.banStarted);
  if (decision.kind === 'limited') {
    return new ApiError('RATE_LIMITED', `${reason}; retry in ${decision.retryAfterSeconds} s`);
  }
  if (decision.banStarted) logger.warn({ identity, bannedUntil: new Date(decision.bannedUntil) }, 'ban started');
  const until = new Date(decision.bannedUntil).toISOString();
  return caller.kind === 'key'
    ? new ApiError('API_KEY_BANNED', `This key kept sending while rate limited; it is banned until ${until}`)
    : new ApiError('CLIENT_BANNED', `This client kept sending while rate limited; it is banned until ${until}`);
}
