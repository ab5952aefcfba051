// First: tracing, when asked for, must patch http, pg and ioredis before they are loaded.
import './telemetry/start';
// Before TypeORM loads: its drivers for other databases stay unread.
import './db/postgres-driver-only';
import 'reflect-metadata';
import { startGateway } from './gateway';
import { flushLog } from './logger';
import { startFailure } from './start-failure';
import { stopTracing } from './telemetry';

/** The process: start the gateway, say where it is, stop it gracefully on a signal. */
async function main(): Promise<void> {
  const gateway = await startGateway();
  const { logger, generatedAdminKey, adminKeyFile } = gateway;
  const url = `${gateway.url}/graphql`;
  logger.info({ url, database: gateway.database.embedded ? 'embedded PGlite' : 'PostgreSQL' }, 'gateway listening');
  console.log(`\nPet Store gateway: ${url}`);
  if (generatedAdminKey) {
    const kept = adminKeyFile ? `kept in ${adminKeyFile} for the next start` : 'made for this run: the database is in memory';
    console.log(`Admin API key (${kept}; set ADMIN_API_KEY to choose one): ${generatedAdminKey}\n`);
  }

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    gateway.close()
      .then(
        () => {
          logger.info('stopped');
          return 0;
        },
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          return 1;
        },
      )
      .then(async (code) => {
        await stopTracing();
        await flushLog(logger);
        process.exit(code);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main().catch((error: unknown) => {
  console.error(startFailure(error));
  process.exit(1);
});
