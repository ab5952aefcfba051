import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { generateApiKey } from './auth/key-secret';
import { ConfigError, loadConfig } from './config';
import { openDatabase } from './db/database';
import { seedDemoCatalogue } from './db/seed';
import { createLogger } from './logger';

/** Start-up only: config → database → app → listen → shutdown hooks. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const database = await openDatabase(config);
  const adminApiKey = config.adminApiKey ?? (database.embedded ? generateApiKey() : undefined);
  const app = await createApp({ config: { ...config, adminApiKey }, dataSource: database.dataSource, logger });
  await app.services.apiKeys.syncEnvironmentKey(adminApiKey);
  if (database.embedded && (await seedDemoCatalogue(database.dataSource))) {
    logger.info('loaded the demo catalogue into the empty embedded database');
  }

  const server = createServer(app.express);
  const host = process.env.HOST ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(config.port, host, resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}/graphql`;
  logger.info({ url, database: database.embedded ? 'embedded PGlite' : 'PostgreSQL' }, 'gateway listening');
  console.log(`\nPet Store gateway: ${url}`);
  if (adminApiKey && !config.adminApiKey) {
    console.log(`Admin API key (generated for this run; set ADMIN_API_KEY to choose one): ${adminApiKey}\n`);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await app.stop();
    await database.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
  process.exit(1);
});
