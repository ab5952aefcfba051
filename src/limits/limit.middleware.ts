import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import '../http/request';
import type { Logger } from '../logger';
import type { Metrics } from '../ops/metrics';
import { identityOf, quotaOfCaller } from './identity';
import type { RateLimiter } from './limiter';
import { rateLimitHeaders } from './rate-limit-headers';

/**
 * Counts every API request once against its identity's windows (API.md §5) and puts the
 * rate-limit headers on the response, whatever comes of the request afterwards. Over the limit:
 * 429 RATE_LIMITED; banned: 403 API_KEY_BANNED or CLIENT_BANNED.
 */
export function limitRequests(limiter: RateLimiter, metrics: Metrics, logger: Logger): RequestHandler {
  return async (req, res, next) => {
    const caller = req.caller ?? { kind: 'anonymous', address: 'unknown' };
    const identity = req.rateLimitIdentity ?? identityOf(caller);
    const decision = await limiter.check(identity, quotaOfCaller(caller));
    req.rateLimit = decision;
    res.set(rateLimitHeaders(decision));
    if (decision.kind === 'allowed') return next();

    metrics.observeRefusal(decision.kind, decision.kind === 'banned' && decision.banStarted);
    if (decision.kind === 'limited') {
      const { limit, name } = decision.reported;
      throw new ApiError(
        'RATE_LIMITED',
        `Rate limit exceeded: ${limit} requests per ${name}; retry in ${decision.retryAfterSeconds} s`,
      );
    }
    if (decision.banStarted) logger.warn({ identity, bannedUntil: new Date(decision.bannedUntil) }, 'ban started');
    const until = new Date(decision.bannedUntil).toISOString();
    throw caller.kind === 'key'
      ? new ApiError('API_KEY_BANNED', `This key kept sending while rate limited; it is banned until ${until}`)
      : new ApiError('CLIENT_BANNED', `This client kept sending while rate limited; it is banned until ${until}`);
  };
}
