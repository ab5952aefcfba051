// First, as in src/main.ts: the traced contender's instrumentations patch http, pg and ioredis as they load.
import '../../src/telemetry/start';
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { startGateway } from '../../src/gateway';
import { traceLoop } from './loop-trace';
import { reportStatsOverIpc } from './server-stats';

/**
 * The gateway as `npm start` runs it, in a process of its own, with its limiter on Redis, in
 * memory, or off (argv[2]): the bench's contender. It reports its port, then its stats on request.
 */
async function main(): Promise<void> {
  const mode = process.argv[2] as 'redis' | 'memory' | 'off';
  // Deployed as production: graphql-js then skips its development-time checks. It logs at
  // LOG_LEVEL, which the bench sets to warn (the peers write no line per request either).
  const env = { ...process.env, NODE_ENV: 'production', REDIS_URL: mode === 'redis' ? process.env.REDIS_URL : '', PORT: '0', HOST: '127.0.0.1',
    // BENCH_REDIS_PREFIX: instances given the same one share limits, as one deployment's do.
    REDIS_KEY_PREFIX: process.env.BENCH_REDIS_PREFIX ?? `bench:${mode}:${Date.now()}` };
  const gateway = await startGateway({ env }, { limitRequests: mode !== 'off' });
  reportStatsOverIpc(async () => {
    gateway.server.closeAllConnections();
    await gateway.close();
  });
  if (process.env.BENCH_LOOP_TRACE_DIR) traceLoop(gateway.server, process.env.BENCH_LOOP_TRACE_DIR);
  process.send?.({ port: (gateway.server.address() as AddressInfo).port });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
