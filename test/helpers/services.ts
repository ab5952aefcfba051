import { redisServerInstalled } from './redis-server';

/**
 * Suites that need a service the run may not have. Without it they show as skipped in Jest's
 * summary (and in CI's closing lines), never vanish.
 */
export const withRedis = process.env.REDIS_URL ? describe : describe.skip;
/** Needs REDIS_URL's mode and a redis-server binary of its own to start, kill and freeze. */
export const withOwnRedis = process.env.REDIS_URL && redisServerInstalled() ? describe : describe.skip;
export const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;
/** The embedded run's counterpart of a `withPostgres` suite (its scale sized for PGlite, say). */
export const withEmbedded = process.env.DATABASE_URL ? describe.skip : describe;

/** `describe.each` over stores, the Redis one skipped (and shown skipped) without REDIS_URL. */
export function eachStore<T>(stores: [name: string, subject: T][]): [string, T, typeof describe][] {
  return stores.map(([name, subject]) => [name, subject, name === 'redis' ? withRedis : describe]);
}
