import type { RequestListener } from 'node:http';
import type { DocumentNode } from 'graphql';
import type { DataSource } from 'typeorm';
import type { Caller } from './auth/caller';
import { callerIdentifier, keyIdentifier } from './auth/identify-caller';
import { admissionOfCaller, quotaOfCaller, shedAtLoopDelayOf, shedAtOf } from './auth/plans';
import type { FairTurns } from './common/fair-turns';
import type { Config } from './config';
import { createServices, type Services } from './context';
import type { DatabaseTime } from './db/database-time';
import { RedisKeyValueCache } from './graphql/apq-cache';
import { NOT_STORED_HEADER, PersistedQueryRegistrations } from './graphql/apq-registrations';
import { documentCache, persistedQueryCache } from './graphql/document-caches';
import { PreparedDocuments } from './graphql/prepared-documents';
import { STREAM_PATH } from './graphql/endpoints';
import { createStreamGateway, type StreamGateway } from './pipeline/sse/stream.server';
import { createWebSocketGateway, type LiveTimings, type WebSocketGateway } from './pipeline/ws/websocket.server';
import { buildGatewaySchema } from './graphql/schema';
import { responseCachePlugin } from './graphql/response-cache.plugin';
import { ResponseCache } from './cache/response-cache';
import { explorerRoutes } from './graphql/explorer/explorer.routes';
import { extraValidationRules, startGraphQLServer } from './graphql/server';
import { TrustedDocuments } from './graphql/trusted-documents';
import { type Logger, withSafeErrors } from './logger';
import { Admitter } from './limits/admit';
import { LoopDelay } from './limits/loop-delay';
import { LOW_PRIORITY_PER_TURN, TurnShare } from './limits/turn-share';
import { createFieldLimiter } from './limits/field-limiter';
import { ChangeHub } from './live/change-hub';
import { listenForChanges, listenOnEmbeddedSession } from './live/change-listener';
import { MemorySubscriptionSlots, RedisSubscriptionSlots } from './live/subscription-slots';
import { RateLimiter } from './limits/limiter';
import { createLimiterStore, type LimiterStores } from './limits/create-store';
import type { StoreStatus } from './limits/limiter-store';
import { healthRoutes } from './ops/health.routes';
import { Metrics } from './ops/metrics';
import { graphqlOverHttp } from './pipeline/graphql-http';
import { httpPipeline } from './pipeline/http';
import { requestServicesOver } from './pipeline/request-services';
import { restRoutes } from './rest/rest.routes';
import type { ReadReplicas } from './sql/read-replicas';
import { READ_AFTER_HEADER } from './sql/read-your-writes';
import { WritePositions, writePositionTtlMs } from './sql/write-positions';
import { poolOf } from './sql/pool';

export const STUDIO_ORIGIN = 'https://studio.apollographql.com';

/** Response headers a browser app may read: quotas, deprecation, paging, tracing, validators. */
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
  'ETag',
  NOT_STORED_HEADER,
  READ_AFTER_HEADER,
  'X-Cache',
  'Age',
];
const ALLOWED_HEADERS = ['Content-Type', 'X-API-Key', 'Apollo-Require-Preflight', 'X-Apollo-Operation-Name', 'X-Request-Id', READ_AFTER_HEADER];

export interface AppDeps {
  config: Config;
  dataSource: DataSource;
  /** DATABASE_READ_URLS' replicas, polled; unset: the primary serves everything. */
  replicas?: ReadReplicas;
  logger: Logger;
  /** True on the embedded PGlite, whose socket passes notifications only to the committing connection. */
  embeddedDatabase?: boolean;
  /** TRUSTED_DOCUMENTS' manifest, checked before anything was opened (loadTrustedDocuments). */
  trustedDocuments?: TrustedDocuments;
}

/**
 * TRUSTED_DOCUMENTS' manifest, each document checked against the schema and the limits: one that
 * may not be served stops start-up, before the database is opened (a wait of seconds for nothing).
 */
export async function loadTrustedDocuments(config: Config, logger: Logger): Promise<TrustedDocuments | undefined> {
  if (!config.trustedDocuments) return undefined;
  const trustedDocuments = TrustedDocuments.load(config.trustedDocuments, await buildGatewaySchema(), { maxCost: config.maxQueryCost, introspection: config.introspection });
  logger.info({ file: config.trustedDocuments.file, documents: trustedDocuments.size }, 'loaded the trusted documents');
  return trustedDocuments;
}

/**
 * Limits the tests and the bench may turn off, and waits the tests may shorten; nothing in
 * production passes them, so they are kept apart from AppDeps. The limits default to true.
 */
export interface TestSwitches {
  /** False only to measure what the limiter costs (npm run bench); the request limits are then off. */
  limitRequests?: boolean;
  /**
   * False leaves requests in flight per identity unbounded: for tests of the windows under
   * bursts no client within the concurrency limit could send.
   */
  limitInFlight?: boolean;
  /** For tests that wait for a socket's or a stream's key check, or for a socket's init timeout to pass. */
  liveTimings?: LiveTimings;
}

export interface App {
  /** Every HTTP request of the gateway: give it to a node:http server (http/http-server.ts). */
  listener: RequestListener;
  services: Services;
  metrics: Metrics;
  /** Each identity's database time on this instance (docs/contract.md §5). */
  databaseTime: DatabaseTime;
  /** The database pool's connections, handed out fairly across identities (docs/contract.md §5). */
  databaseTurns: FairTurns;
  /** The instances sharing Redis as this one last saw them: from memory it admits a quota ÷ this. */
  instances(): number;
  /** The limiter's store: in this process (`not configured`), Redis (`ok`), or memory while Redis is unreachable. */
  limiterStatus(): 'not configured' | StoreStatus;
  /** Subscriptions over WebSocket: attach to the HTTP server that serves `listener`. */
  websockets: WebSocketGateway;
  /** Subscriptions over Server-Sent Events at /graphql/stream: ended on shutdown once HTTP requests drain. */
  streams: StreamGateway;
  /** Stops GraphQL execution and the limiter's Redis client; the caller closes the HTTP server and the database. */
  stop(): Promise<void>;
}

/** The gateway's request pipeline and WebSocket server. It never listens: gateway.ts does. */
export async function createApp(
  { config, dataSource, replicas, logger: givenLogger, embeddedDatabase = false, trustedDocuments }: AppDeps,
  { limitRequests: limiting = true, limitInFlight = true, liveTimings: timings }: TestSwitches = {},
): Promise<App> {
  // Whatever logger the app is given, an error's bound SQL parameters never reach it.
  const logger = withSafeErrors(givenLogger);
  const schema = await buildGatewaySchema();
  const limits = await createLimiterStore({ redis: config.redis, logger, prefix: config.redisKeyPrefix });
  const limiterStatus = () => (limits.backend === 'memory' ? ('not configured' as const) : limits.store.status());
  const limiter = new RateLimiter(limits.store, { threshold: config.banThreshold, durationMs: config.banSeconds * 1000 });
  const metrics = new Metrics(dataSource);
  const hub = new ChangeHub(metrics);
  const slots = limits.redis ? new RedisSubscriptionSlots(limits.redis.client, limits.redis.prefix, logger) : new MemorySubscriptionSlots();
  const services = createServices(dataSource, { limiter, fieldLimiter: createFieldLimiter(limits.fieldStore) }, { hub, slots }, logger, replicas);
  // Priced from the first request on by the catalogue's real size, not the size assumed before any read.
  await services.database.catalogueSize.refresh();
  const documents = trustedDocuments ? trustedDocuments.documentStore(documentCache()) : documentCache();
  const prepared = new PreparedDocuments(schema, extraValidationRules(config), !config.introspection, documents);
  const apqCache = limits.redis ? new RedisKeyValueCache(limits.redis.client, `${limits.redis.prefix}:`, logger) : persistedQueryCache();
  const registrations = new PersistedQueryRegistrations(apqCache, limits.store);
  const catalogueSize = () => services.database.catalogueSize.current();
  const cache = config.responseCache ? createResponseCache(config, limits, metrics) : undefined;
  const cachePlugin = cache && responseCachePlugin(schema, cache, replicas ? config.databaseReadMaxLagMs : 0);
  const apollo = await startGraphQLServer(schema, config, logger, catalogueSize, { apqCache, documentStore: prepared.store() }, cachePlugin);
  const onChange = (payload: string, position?: Promise<bigint | undefined>) => {
    cache?.changed(payload);
    hub.receive(payload, position);
  };
  const watcher = cache && { joined: () => cache.streamJoined(), lost: () => cache.streamLost() };
  const listener = embeddedDatabase
    ? await listenOnEmbeddedSession(dataSource, onChange, watcher)
    : await listenForChanges(config.databaseDirectUrl ?? (dataSource.options as { url: string }).url, onChange, logger, { positions: replicas !== undefined, watcher });
  const allowedOrigins = [STUDIO_ORIGIN, ...config.corsOrigins];
  const loopDelay = new LoopDelay().start();
  const readYourWrites = replicas && {
    replicas,
    positions: new WritePositions(writePositionTtlMs(config.databaseReadMaxLagMs), limits.redis),
    primary: dataSource,
    onRouted: (servedBy: 'primary' | 'replica') => metrics.observeRead(servedBy),
  };
  if (replicas) metrics.watchReplicas(() => replicas.status());
  // Every pool's connections are turns: a read on a replica holds one of its connections, not the primary's.
  const connections = (poolOf(dataSource).options.max ?? 1) + (replicas?.connections() ?? 0);
  const { requestServices, databaseTime, poolTurns, unpaidRefusalOf } = requestServicesOver(services, config, logger, connections, readYourWrites);
  const admitter = new Admitter<Caller>({
    limiter,
    metrics,
    logger,
    quotaOf: quotaOfCaller,
    admissionOf: limitInFlight ? admissionOfCaller : undefined,
    shedAtOf: limitInFlight ? shedAtOf : undefined,
    loopDelay:
      limitInFlight && config.shedLoopDelayMs > 0
        ? { ms: () => loopDelay.ms, shedAtOf: (caller) => shedAtLoopDelayOf(caller, config.shedLoopDelayMs), turns: new TurnShare(LOW_PRIORITY_PER_TURN) }
        : undefined,
    unpaidRefusalOf: limitInFlight ? unpaidRefusalOf : undefined,
    banPauseMs: config.banPauseMs,
    limiting,
  });
  metrics.watchInFlight(() => admitter.inFlightTotals());
  metrics.watchStatementSlots(() => poolTurns.held);
  // One identification for every transport; open connections' keys are checked again by the other.
  const identify = callerIdentifier(services.apiKeys, config.trustProxy);
  const checkKeys = keyIdentifier(services.apiKeys);
  const trusted = { documents: trustedDocuments, only: config.trustedDocumentsOnly };
  const validate = (document: DocumentNode) => prepared.validate(document);
  const websockets = createWebSocketGateway({ schema, services, config, allowedOrigins, logger, metrics, identify, checkKeys, admitter, validate, trusted, timings });
  const { admission, delivery } = websockets;
  const streams = createStreamGateway({ schema, services, config, logger, metrics, checkKeys, admitter, admission, delivery, validate, trusted, timings });

  return {
    listener: httpPipeline({
      logger,
      metrics,
      cors: { origins: allowedOrigins, allowedHeaders: ALLOWED_HEADERS, exposedHeaders: EXPOSED_HEADERS, maxAgeSeconds: 600 },
      identify,
      admitter,
      requestServices,
      readReplicas: replicas !== undefined,
      ops: healthRoutes({
        dataSource,
        replicas,
        metrics,
        limiterStatus,
      }),
      explorer: explorerRoutes(config.explorer),
      graphql: graphqlOverHttp({ apollo, prepared, registrations, logger, trusted }),
      rest: restRoutes(config),
      stream: { path: STREAM_PATH, serve: streams.serve },
    }),
    services,
    metrics,
    databaseTime,
    databaseTurns: poolTurns,
    instances: () => limits.instances(),
    limiterStatus,
    websockets,
    streams,
    async stop() {
      await Promise.all([websockets.close(), streams.close()]);
      await listener.close();
      slots.close();
      loopDelay.stop();
      await apollo.stop();
      await limits.close();
    },
  };
}

/** The response cache: this process's memory, and Redis's when the limiter has it and it answers. */
function createResponseCache(config: Config, limits: LimiterStores, metrics: Metrics): ResponseCache {
  const redis = limits.redis && { ...limits.redis, usable: () => limits.store.status() === 'ok' };
  return new ResponseCache({ maxAgeMs: config.responseCacheMaxAgeSeconds * 1000, maxBytes: config.responseCacheMaxBytes, redis, observer: metrics });
}
