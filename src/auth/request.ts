import type { Request } from 'express';
import type { Decision } from '../limits/limiter';
import type { Caller } from './caller';

/**
 * What identify-caller learns of a request's sender, and the limiter's decision on it, for the
 * steps after them (the limiter, in limits/, reads its part through a structural type of its own).
 */
declare module 'express-serve-static-core' {
  interface Request {
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

/** The request's caller: one the identification step did not see counts as an anonymous client. */
export function callerOf(req: Request): Caller {
  return req.caller ?? { kind: 'anonymous', address: 'unknown' };
}
