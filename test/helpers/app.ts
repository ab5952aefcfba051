import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import pino from 'pino';
import type { App } from '../../src/app';
import { generateApiKey } from '../../src/auth/key-secret';
import type { Config } from '../../src/config';
import { startGateway } from '../../src/gateway';
import type { Logger } from '../../src/logger';
import type { LiveTimings } from '../../src/pipeline/ws/websocket.server';
import { createTestDatabase, type TestDatabase } from './database';

export interface TestApp {
  /** http://127.0.0.1:<port> */
  url: string;
  app: App;
  db: TestDatabase;
  config: Config;
  /** The ADMIN_API_KEY of this app. */
  adminKey: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * For tests of what the database's limits do to requests (time, turns, slots held by a slow
 * statement): with the response cache, a repeated catalogue query would take no database time at all.
 */
export const DATABASE_BOUND = { RESPONSE_CACHE: 'false' } as const;

export interface TestAppOptions {
  /** An existing database (another app's, say); the app then leaves it open on close. */
  db?: TestDatabase;
  /** REDIS_KEY_PREFIX: apps given the same one share limiter state in Redis, as instances of one deployment do. */
  limiterKeyPrefix?: string;
  /** Where the app logs; by default nowhere (LOG_LEVEL silent). */
  logger?: Logger;
  /** False: no bound on requests in flight per identity (for bursts testing the windows alone). */
  limitInFlight?: boolean;
  /** False: no request quotas (for tests of bounds reached only past a minute's quota). */
  limitRequests?: boolean;
  /** Shorter waits than production's for a socket's key check and init timeout, for the tests that wait for them. */
  liveTimings?: LiveTimings;
}

/**
 * The real gateway (started as main.ts starts it) on a real database, listening on a free
 * loopback port. With REDIS_URL set, its limiter lives in that Redis, under a prefix of its own
 * unless one is given.
 */
export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const { db, limiterKeyPrefix = `test:${randomBytes(6).toString('hex')}`, logger: givenLogger, limitInFlight, limitRequests, liveTimings } = options;
  const redis = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {};
  // Banned requests are answered at once, a busy loop sheds nothing and the unpaid classes'
  // database time is unbounded, unless a test asks (test/limits/http-limits.cases.ts,
  // test/limits/crowd.cases.ts, test/limits/unpaid-database-time.cases.ts).
  const gatewayEnv = { PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: generateApiKey(), LOG_LEVEL: 'silent', REDIS_KEY_PREFIX: limiterKeyPrefix, BAN_PAUSE_MS: '0', SHED_LOOP_DELAY_MS: '0', UNPAID_DATABASE_MS_PER_SECOND: '0', ...redis, ...env };
  const database = db ?? (await createTestDatabase());
  const logger = givenLogger ?? pino({ level: gatewayEnv.LOG_LEVEL });
  const gateway = await startGateway({ env: gatewayEnv, database, logger }, { limitInFlight, limitRequests, liveTimings }).catch(async (error: unknown) => {
    if (!db) await database.close();
    throw error;
  });
  return {
    url: gateway.url,
    app: gateway.app,
    db: database,
    config: gateway.config,
    adminKey: gateway.config.adminApiKey as string,
    server: gateway.server,
    async close() {
      // Tests leave nothing in flight worth waiting for: idle keep-alive connections go at once.
      gateway.server.closeAllConnections();
      await gateway.close();
      if (!db) await database.close();
    },
  };
}
