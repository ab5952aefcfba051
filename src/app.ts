import cors from 'cors';
import express, { type Express } from 'express';
import type { DataSource } from 'typeorm';
import { identifyCaller, rejectInvalidApiKey } from './auth/identify-caller';
import type { Config } from './config';
import { createServices, type Services } from './context';
import { graphqlRoute } from './graphql/graphql.route';
import { buildGatewaySchema } from './graphql/schema';
import { startGraphQLServer } from './graphql/server';
import { errorHandler, notFoundHandler } from './http/error-handler';
import type { Logger } from './logger';

export const STUDIO_ORIGIN = 'https://studio.apollographql.com';

export interface AppDeps {
  config: Config;
  dataSource: DataSource;
  logger: Logger;
}

export interface App {
  express: Express;
  services: Services;
  /** Stops GraphQL execution; the caller closes the HTTP server and the database. */
  stop(): Promise<void>;
}

/** The gateway as an Express app. It never listens: main.ts and the tests do. */
export async function createApp({ config, dataSource, logger }: AppDeps): Promise<App> {
  const services = createServices(dataSource);
  const apollo = await startGraphQLServer(await buildGatewaySchema(), config, logger);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // One proxy hop: the right-most X-Forwarded-For address is the one our proxy saw.
  app.set('trust proxy', config.trustProxy ? 1 : false);

  app.use(
    cors({
      origin: [STUDIO_ORIGIN, ...config.corsOrigins],
      allowedHeaders: ['Content-Type', 'X-API-Key', 'Apollo-Require-Preflight', 'X-Apollo-Operation-Name', 'X-Request-Id'],
      maxAge: 600,
    }),
  );
  app.use(identifyCaller(services.apiKeys));
  app.use(rejectInvalidApiKey);
  app.use('/graphql', graphqlRoute(apollo, services));
  app.use(notFoundHandler);
  app.use(errorHandler(logger));

  return { express: app, services, stop: () => apollo.stop() };
}
