// First: tracing, when asked for, must start before pg and ioredis are loaded (its instrumentations patch them as they load).
import './telemetry/start';
import 'reflect-metadata';
import { misspelledVariables } from './config';
import { databaseLocation } from './db/database-location';
import { startGateway } from './gateway';
import { redisAddress } from './limits/redis-client';
import { flushLog } from './logger';
import { startFailure } from './start-failure';
import { stopTracing } from './telemetry';

/** The process: start the gateway, say where it is, stop it gracefully on a signal. */
async function main(): Promise<void> {
  for (const line of misspelledVariables(process.env)) console.error(`Warning: ${line}`);
  const gateway = await startGateway();
  const { logger, generatedAdminKey, adminKeyFile, config } = gateway;
  const url = `${gateway.url}/graphql`;
  // Before the ready line: whoever reads it may signal at once, and a signal with no listener yet ends the process.
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
  const database = databaseLocation(config);
  logger.info({ url, database }, 'gateway listening');
  console.log(`\nPet Store gateway: ${url}`);
  console.log(`Database: ${database}`);
  if (config.redis && gateway.app.limiterStatus() === 'degraded') {
    const where = redisAddress(config.redis);
    console.error(`Warning: Redis at ${where} cannot be reached: rate limits and bans are per instance until it answers; is it running, and is the address right?`);
  }
  if (generatedAdminKey) {
    const kept = adminKeyFile ? `kept in ${adminKeyFile} for the next start` : 'made for this run: the database is in memory';
    console.log(`Admin API key (${kept}; set ADMIN_API_KEY to choose one): ${generatedAdminKey}\n`);
  }
}

main().catch((error: unknown) => {
  console.error(startFailure(error));
  process.exit(1);
});
