import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

/** When GET /pets/{petId} was deprecated: the day the GraphQL gateway replaced it. */
export const PETS_DEPRECATED_AT = new Date('2026-11-01T00:00:00Z');

/**
 * Marks a route deprecated (RFC 9745 `Deprecation`, RFC 8594 `Sunset`, a `successor-version`
 * link) and answers 410 GONE from the sunset on.
 */
export function deprecated(route: string, deprecatedAt: Date, sunset: Date, clock: () => number = Date.now): RequestHandler {
  const headers = {
    Deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}`,
    Sunset: sunset.toUTCString(),
    Link: '</graphql>; rel="successor-version"',
  };
  return (_req, res, next) => {
    res.set(headers);
    if (clock() >= sunset.getTime()) {
      throw new ApiError('GONE', `${route} was retired on ${sunset.toISOString()}; use /graphql instead`);
    }
    next();
  };
}
