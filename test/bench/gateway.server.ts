import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import { createHttpServer } from '../../src/http/http-server';
import { createLogger } from '../../src/logger';
import { reportStatsOverIpc } from './server-stats';

/**
 * The gateway as `npm start` runs it, in a process of its own, with its limiter on Redis, in
 * memory, or off (argv[2]): the bench's contender. It reports its port, then its stats on request.
 */
async function main(): Promise<void> {
  const mode = process.argv[2] as 'redis' | 'memory' | 'off';
  // Deployed as production: graphql-js then skips its development-time checks. It logs a line per
  // request as in production; the bench discards its output.
  const config = loadConfig({ ...process.env, NODE_ENV: 'production', REDIS_URL: mode === 'redis' ? process.env.REDIS_URL : '' });
  const database = await openDatabase(config);
  const app = await createApp({
    config,
    dataSource: database.dataSource,
    logger: createLogger(config.logLevel),
    limiterKeyPrefix: `bench:${mode}:${Date.now()}`,
    limitRequests: mode !== 'off',
  });
  const server = createHttpServer(app.express);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  reportStatsOverIpc(async () => {
    server.closeAllConnections();
    await app.stop();
    await database.close();
  });
  process.send?.({ port: (server.address() as AddressInfo).port });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
