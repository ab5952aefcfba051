import { relative } from 'node:path';
import { redisServerInstalled } from './redis-server';

const ROOT = `${__dirname}/../..`;
const said = new Set<string>();

/**
 * `describe` when nothing is `missing`; else a `describe.skip` that says why, in one line on
 * stderr, once per test file and reason: a suite skipped for want of a service shows as skipped in
 * Jest's summary and names what it needs, never vanishes in silence.
 */
export function describeWhen(missing: string | false | undefined): typeof describe {
  if (!missing) return describe;
  const skipped = ((name: string, suite: () => void) => {
    const file = relative(ROOT, expect.getState().testPath ?? 'a test file');
    const line = `skipped in ${file}: needs ${missing}`;
    if (!said.has(line)) {
      said.add(line);
      process.stderr.write(`${line}\n`);
    }
    describe.skip(name, suite);
  }) as typeof describe;
  return Object.assign(skipped, { skip: describe.skip, only: describe.only, each: describe.skip.each });
}

/** Needs REDIS_URL: the services mode of docs/development.md. */
export const withRedis = describeWhen(!process.env.REDIS_URL && 'REDIS_URL (services mode)');
/** Needs REDIS_URL's mode and a redis-server binary of its own to start, kill and freeze. */
export const withOwnRedis = describeWhen(
  (!process.env.REDIS_URL && 'REDIS_URL (services mode) and redis-server') || (!redisServerInstalled() && 'redis-server (apt-get install redis-server)'),
);
export const withPostgres = describeWhen(!process.env.DATABASE_URL && 'DATABASE_URL (services mode)');
/** The embedded run's counterpart of a `withPostgres` suite (its scale sized for PGlite, say). */
export const withEmbedded = describeWhen(!!process.env.DATABASE_URL && 'the embedded database (DATABASE_URL unset); its PostgreSQL counterpart runs instead');

/** `describe.each` over stores, the Redis one skipped (and shown skipped, saying why) without REDIS_URL. */
export function eachStore<T>(stores: [name: string, subject: T][]): [string, T, typeof describe][] {
  return stores.map(([name, subject]) => [name, subject, name === 'redis' ? withRedis : describe]);
}
