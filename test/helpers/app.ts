import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { type App, createApp } from '../../src/app';
import { generateApiKey } from '../../src/auth/key-secret';
import { type Config, loadConfig } from '../../src/config';
import { createHttpServer } from '../../src/http/http-server';
import type { Logger } from '../../src/logger';
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

export interface TestAppOptions {
  /** An existing database (another app's, say); the app then leaves it open on close. */
  db?: TestDatabase;
  /** Apps given the same prefix share limiter state in Redis, as instances of one deployment do. */
  limiterKeyPrefix?: string;
  /** Where the app logs; by default nowhere (LOG_LEVEL silent). */
  logger?: Logger;
}

/**
 * The real gateway on a real database, listening on a free loopback port. With REDIS_URL set, its
 * limiter lives in that Redis, under a prefix of its own unless one is given.
 */
export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const { db, limiterKeyPrefix = `test:${randomBytes(6).toString('hex')}`, logger: givenLogger } = options;
  const adminKey = generateApiKey();
  const redis = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {};
  const config = loadConfig({ ADMIN_API_KEY: adminKey, LOG_LEVEL: 'silent', ...redis, ...env });
  const database = db ?? (await createTestDatabase());
  const logger = givenLogger ?? pino({ level: config.logLevel });
  const app = await createApp({ config, dataSource: database.dataSource, logger, limiterKeyPrefix });
  await app.services.apiKeys.syncEnvironmentKey(config.adminApiKey);
  const server = createHttpServer(app.express);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    db: database,
    config,
    adminKey: config.adminApiKey ?? adminKey,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.stop();
      if (!db) await database.close();
    },
  };
}
