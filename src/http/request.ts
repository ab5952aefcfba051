import type { Caller } from '../auth/caller';
import type { Decision } from '../limits/limiter';

declare module 'express-serve-static-core' {
  interface Request {
    /** Echoed as X-Request-Id and written on every log line of this request. */
    requestId?: string;
    /** Who sent the request; set before the limiter runs. */
    caller?: Caller;
    /** An X-API-Key was sent but names no valid key: refused after it is counted. */
    invalidApiKey?: boolean;
    /** Why the X-API-Key could not be checked (the database is down, say): raised after counting. */
    authenticationError?: unknown;
    /** Whom to count the request against when that is not its caller (a key that could not be checked). */
    rateLimitIdentity?: string;
    /** This request's limiter decision: the `rateLimit` query answers from it. */
    rateLimit?: Decision;
  }
}
