import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import cors from 'cors';
import express, { type Express } from 'express';
import type { DataSource } from 'typeorm';
import { identifyCaller, rejectUnverifiedKey } from './auth/identify-caller';
import { callerOf } from './auth/request';
import type { Caller } from './auth/caller';
import { admissionOfCaller, databaseTimeOfCaller, quotaOfCaller, statementsAtOnceOfCaller } from './auth/plans';
import type { Config } from './config';
import { createServices, type Services, servicesOver } from './context';
import { DatabaseTime } from './db/database-time';
import { budgetedView, IdentitySlots, StatementBudget } from './db/statement-budget';
import { RedisKeyValueCache } from './graphql/apq-cache';
import { graphqlRoute } from './graphql/graphql.route';
import { createWebSocketGateway, type WebSocketGateway } from './graphql/websocket.server';
import { buildGatewaySchema } from './graphql/schema';
import { startGraphQLServer } from './graphql/server';
import { TrustedDocuments } from './graphql/trusted-documents';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { refuseMalformedHttp } from './http/malformed-http';
import { requestLog } from './http/request-log';
import { type Logger, withSafeErrors } from './logger';
import { createFieldLimiter } from './limits/field-limiter';
import { identityOf } from './limits/identity';
import { limitRequests } from './limits/limit.middleware';
import { ChangeHub } from './live/change-hub';
import { listenForChanges, listenOnEmbeddedSession } from './live/change-listener';
import { MemorySubscriptionSlots, RedisSubscriptionSlots } from './live/subscription-slots';
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
  /** True on the embedded PGlite, whose socket passes notifications only to the committing connection. */
  embeddedDatabase?: boolean;
}

/**
 * Limits the tests and the bench may turn off; nothing in production passes them, so they are
 * kept apart from AppDeps. Both default to true.
 */
export interface TestSwitches {
  /** False only to measure what the limiter costs (npm run bench); the request limits are then off. */
  limitRequests?: boolean;
  /**
   * False leaves requests in flight per identity unbounded: for tests of the windows under
   * bursts no client within the concurrency limit could send.
   */
  limitInFlight?: boolean;
}

export interface App {
  express: Express;
  services: Services;
  metrics: Metrics;
  /** Each identity's database time on this instance (docs/contract.md §5). */
  databaseTime: DatabaseTime;
  /** Subscriptions over WebSocket: attach to the HTTP server that serves `express`. */
  websockets: WebSocketGateway;
  /** Stops GraphQL execution and the limiter's Redis client; the caller closes the HTTP server and the database. */
  stop(): Promise<void>;
}

/** The gateway as an Express app. It never listens: main.ts and the tests do. */
export async function createApp(
  { config, dataSource, logger: givenLogger, embeddedDatabase = false }: AppDeps,
  { limitRequests: limiting = true, limitInFlight = true }: TestSwitches = {},
): Promise<App> {
  // Whatever logger the app is given, an error's bound SQL parameters never reach it.
  const logger = withSafeErrors(givenLogger);
  const schema = await buildGatewaySchema();
  // Before anything is opened: a manifest document that is invalid or over a limit stops start-up, named.
  const trustedDocuments =
    config.trustedDocuments &&
    TrustedDocuments.load(config.trustedDocuments, schema, { maxCost: config.maxQueryCost, introspection: config.introspection });
  if (trustedDocuments) logger.info({ file: config.trustedDocuments?.file, documents: trustedDocuments.size }, 'loaded the trusted documents');
  const limits = await createLimiterStore({ redis: config.redis, logger, prefix: config.redisKeyPrefix });
  const limiter = new RateLimiter(limits.store, { threshold: config.banThreshold, durationMs: config.banSeconds * 1000 });
  const metrics = new Metrics(dataSource);
  const hub = new ChangeHub(metrics);
  const slots = limits.redis ? new RedisSubscriptionSlots(limits.redis.client, limits.redis.prefix, logger) : new MemorySubscriptionSlots();
  const services = createServices(dataSource, { limiter, fieldLimiter: createFieldLimiter(limits.fieldStore) }, { hub, slots });
  const apollo = await startGraphQLServer(schema, config, logger, {
    apqCache: limits.redis && new RedisKeyValueCache(limits.redis.client, `${limits.redis.prefix}:`, logger),
    documentStore: trustedDocuments?.documentStore(new InMemoryLRUCache()),
  });
  const onChange = (payload: string) => hub.receive(payload);
  const listener = embeddedDatabase
    ? await listenOnEmbeddedSession(dataSource, onChange)
    : await listenForChanges(config.databaseDirectUrl ?? (dataSource.options as { url: string }).url, onChange, logger);
  const allowedOrigins = [STUDIO_ORIGIN, ...config.corsOrigins];
  const websockets = createWebSocketGateway({ schema, services, config, allowedOrigins, logger, metrics, limiting });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

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
      origin: allowedOrigins,
      allowedHeaders: ['Content-Type', 'X-API-Key', 'Apollo-Require-Preflight', 'X-Apollo-Operation-Name', 'X-Request-Id'],
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
    }),
  );
  app.use(identifyCaller(services.apiKeys, config.trustProxy));
  if (limiting) app.use(limitRequests<Caller>(limiter, metrics, logger, quotaOfCaller, limitInFlight ? admissionOfCaller : undefined, config.banPauseMs));
  app.use(refuseMalformedHttp);
  app.use(rejectUnverifiedKey);
  // Each request's statements are counted, and each identity's run a few at a time, within its
  // database time a minute (docs/contract.md §5).
  const statementSlots = new IdentitySlots();
  const databaseTime = new DatabaseTime();
  app.use((req, _res, next) => {
    const caller = callerOf(req);
    const identity = req.rateLimitIdentity ?? identityOf(caller);
    const size = statementsAtOnceOfCaller(caller);
    const budget = new StatementBudget({
      slots: () => statementSlots.of(identity, size),
      waitMs: config.databaseStatementTimeoutMs,
      time: { meter: databaseTime, identity, allowanceMs: databaseTimeOfCaller(caller) },
      // A client's own backlog: a warning, not an error of the gateway's.
      onRefusal: (refusal) => logger.warn({ requestId: req.requestId, reason: refusal.message }, 'request refused: over its database allowance'),
    });
    req.services = servicesOver(services, budgetedView(dataSource, budget));
    next();
  });
  app.use('/graphql', graphqlRoute(apollo, { documents: trustedDocuments, only: config.trustedDocumentsOnly }));
  app.use(restRoutes(config));
  app.use(notFoundHandler);
  app.use(errorHandler(logger));

  return {
    express: app,
    services,
    metrics,
    databaseTime,
    websockets,
    async stop() {
      await websockets.close();
      await listener.close();
      slots.close();
      await apollo.stop();
      await limits.close();
    },
  };
}
