import cors from 'cors';
import express, { type Express } from 'express';
import type { DataSource } from 'typeorm';
import { identifyCaller, rejectUnverifiedKey } from './auth/identify-caller';
import type { Config } from './config';
import { createServices, type Services } from './context';
import { graphqlRoute } from './graphql/graphql.route';
import { buildGatewaySchema } from './graphql/schema';
import { startGraphQLServer } from './graphql/server';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { requestLog } from './http/request-log';
import type { Logger } from './logger';
import { createFieldLimiter } from './limits/field-limiter';
import { limitRequests } from './limits/limit.middleware';
import { RateLimiter } from './limits/limiter';
import { createLimiterStore } from './limits/create-store';
import { healthRoutes } from './ops/health.routes';
import { Metrics } from './ops/metrics';
import { restRoutes } from './rest/rest.routes';

export const STUDIO_ORIGIN = 'https://studio.apollographql.com';

/** Response headers a browser app may read: quotas, deprecation, paging, tracing. */
const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Link',
  'X-Total-Count',
  'X-Request-Id',
];

export interface AppDeps {
  config: Config;
  dataSource: DataSource;
  logger: Logger;
  /** Prefix of the limiter's Redis keys: deployments (or test runs) sharing a Redis keep apart. */
  limiterKeyPrefix?: string;
  /** False only to measure what the limiter costs (npm run bench); the request limits are then off. */
  limitRequests?: boolean;
}

export interface App {
  express: Express;
  services: Services;
  metrics: Metrics;
  /** Stops GraphQL execution and the limiter's Redis client; the caller closes the HTTP server and the database. */
  stop(): Promise<void>;
}

/** The gateway as an Express app. It never listens: main.ts and the tests do. */
export async function createApp({ config, dataSource, logger, limiterKeyPrefix, limitRequests: limiting = true }: AppDeps): Promise<App> {
  const limits = await createLimiterStore({ redisUrl: config.redisUrl, logger, prefix: limiterKeyPrefix });
  const limiter = new RateLimiter(limits.store, { threshold: config.banThreshold, durationMs: config.banSeconds * 1000 });
  const services = createServices(dataSource, { limiter, fieldLimiter: createFieldLimiter(limits.fieldStore) });
  const metrics = new Metrics(dataSource);
  const apollo = await startGraphQLServer(await buildGatewaySchema(), config, logger);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // One proxy hop: the right-most X-Forwarded-For address is the one our proxy saw.
  app.set('trust proxy', config.trustProxy ? 1 : false);

  app.use(requestLog(logger, metrics));
  app.use(
    healthRoutes({
      dataSource,
      metrics,
      limiterStatus: () => (limits.backend === 'memory' ? 'not configured' : limits.store.status()),
    }),
  );
  app.use(
    cors({
      origin: [STUDIO_ORIGIN, ...config.corsOrigins],
      allowedHeaders: ['Content-Type', 'X-API-Key', 'Apollo-Require-Preflight', 'X-Apollo-Operation-Name', 'X-Request-Id'],
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
    }),
  );
  app.use(identifyCaller(services.apiKeys));
  if (limiting) app.use(limitRequests(limiter, metrics, logger));
  app.use(rejectUnverifiedKey);
  app.use('/graphql', graphqlRoute(apollo, services));
  app.use(restRoutes(services, config));
  app.use(notFoundHandler);
  app.use(errorHandler(logger));

  return {
    express: app,
    services,
    metrics,
    async stop() {
      await apollo.stop();
      await limits.close();
    },
  };
}
