import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { generateApiKey } from './auth/key-secret';
import { ConfigError, loadConfig } from './config';
import { openDatabase } from './db/database';
import { seedDemoCatalogue } from './db/seed';
import { createHttpServer } from './http/http-server';
import { shutDown } from './http/shutdown';
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

  const server = createHttpServer(app.express);
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
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    shutDown({ server, stopApp: () => app.stop(), closeDatabase: () => database.close(), logger }).then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
  process.exit(1);
});
