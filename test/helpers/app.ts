import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { type App, createApp } from '../../src/app';
import { generateApiKey } from '../../src/auth/key-secret';
import { type Config, loadConfig } from '../../src/config';
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

/** The real gateway on a real database, listening on a free loopback port. */
export async function startTestApp(
  env: Record<string, string> = {},
  db?: TestDatabase,
): Promise<TestApp> {
  const adminKey = generateApiKey();
  const config = loadConfig({ ADMIN_API_KEY: adminKey, LOG_LEVEL: 'silent', ...env });
  const database = db ?? (await createTestDatabase());
  const logger = pino({ level: config.logLevel });
  const app = await createApp({ config, dataSource: database.dataSource, logger });
  await app.services.apiKeys.syncEnvironmentKey(config.adminApiKey);
  const server = createServer(app.express);
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
