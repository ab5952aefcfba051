import { ApiError } from '../errors';

/** When GET /pets/{petId} was deprecated: the day the GraphQL gateway replaced it. */
export const PETS_DEPRECATED_AT = new Date('2026-11-01T00:00:00Z');

/**
 * The headers that mark a route deprecated (RFC 9745 `Deprecation`, RFC 8594 `Sunset`, a
 * `successor-version` link); from the sunset on, `check` refuses it 410 GONE.
 */
export function deprecation(route: string, deprecatedAt: Date, sunset: Date, clock: () => number = Date.now) {
  const headers: Readonly<Record<string, string>> = Object.freeze({
    Deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}`,
    Sunset: sunset.toUTCString(),
    Link: '</graphql>; rel="successor-version"',
  });
  return {
    headers,
    check(): void {
      if (clock() >= sunset.getTime()) throw new ApiError('GONE', `${route} was retired on ${sunset.toISOString()}; use /graphql instead`);
    },
  };
}
