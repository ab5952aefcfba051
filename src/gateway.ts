import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type App, createApp, loadTrustedDocuments, type TestSwitches } from './app';
import { type Config, ConfigError, loadConfig } from './config';
import { type Database, openDatabase } from './db/database';
import { embeddedAdminKey } from './db/embedded-admin-key';
import { openReadReplicas } from './db/read-replicas';
import { IN_MEMORY } from './db/in-memory';
import { seedDemoCatalogue } from './db/seed';
import { createHttpServer } from './http/http-server';
import { shutDown } from './http/shutdown';
import { createLogger, type Logger } from './logger';

export interface GatewayOptions {
  /** Where the settings come from (loadConfig). */
  env?: Record<string, string | undefined>;
  /** An open database to serve instead of the configured one; it is neither seeded nor closed. */
  database?: Database;
  /** By default JSON lines on stdout at LOG_LEVEL. */
  logger?: Logger;
}

export interface Gateway {
  /** http://host:port, without a path. */
  url: string;
  server: Server;
  app: App;
  database: Database;
  /** The settings in force, admin key included. */
  config: Config;
  /** The admin key the gateway made up: embedded, and ADMIN_API_KEY unset. */
  generatedAdminKey?: string;
  /** Where that key is kept for the next start: the data directory (none when in memory). */
  adminKeyFile?: string;
  logger: Logger;
  /** Graceful: in-flight requests finish (within the grace period), then the app and database close. */
  close(): Promise<void>;
}

/**
 * The whole gateway, listening: config → trusted documents → database → app → admin key → demo
 * catalogue (an empty embedded database only) → listen. The process (main.ts) and the tests start
 * it the same way; only the tests and the bench pass switches.
 */
export async function startGateway(
  { env = process.env, database: given, logger: givenLogger }: GatewayOptions = {},
  switches: TestSwitches = {},
): Promise<Gateway> {
  const loaded = loadConfig(env);
  const logger = givenLogger ?? createLogger(loaded.logLevel, loaded.logFlushMs);
  const trustedDocuments = await loadTrustedDocuments(loaded, logger);
  const database = given ?? (await openDatabase(loaded));
  let replicas: Awaited<ReturnType<typeof openReadReplicas>>;
  // The replicas are the gateway's own, closed with it, whoever opened the primary.
  const closeDatabase = async () => {
    await replicas?.close();
    if (!given) await database.close();
  };
  let app: App | undefined;
  try {
    replicas = await openReadReplicas(loaded, database.dataSource, logger);
    // Embedded mode must be usable at once, so it always has an admin key, the same on each start.
    const made = loaded.adminApiKey === undefined && database.embedded ? embeddedAdminKey(given ? IN_MEMORY : loaded.pgliteDataDir) : undefined;
    const generatedAdminKey = made?.key;
    const config = { ...loaded, adminApiKey: loaded.adminApiKey ?? generatedAdminKey };
    app = await createApp({ config, dataSource: database.dataSource, replicas, logger, embeddedDatabase: database.embedded, trustedDocuments }, switches);
    await app.services.apiKeys.syncEnvironmentKey(config.adminApiKey);
    if (!given && database.embedded && (await seedDemoCatalogue(database.dataSource))) {
      logger.info('loaded the demo catalogue into the empty embedded database');
    }
    const server = createHttpServer(app.listener);
    app.websockets.attach(server);
    await listen(server, config);
    // Once listening, a failure to accept a connection (out of file descriptors, say) is emitted
    // on the server: the connection is lost, the process and its other connections are not.
    server.on('error', (error: Error) => logger.warn({ err: error.message }, 'HTTP server error'));
    const started = app;
    return {
      url: urlOf(server, config.host),
      server,
      app: started,
      database,
      config,
      generatedAdminKey,
      adminKeyFile: made?.file,
      logger,
      close: () => shutDown({ server, sockets: liveConnections(started), stopApp: () => started.stop(), closeDatabase, logger }),
    };
  } catch (error) {
    await app?.stop().catch(() => undefined);
    await closeDatabase().catch(() => undefined);
    throw error;
  }
}

/** WebSockets and SSE streams: the connections left once HTTP requests drain, then closed. */
function liveConnections({ websockets, streams }: App) {
  return {
    openSockets: () => websockets.openSockets() + streams.openStreams(),
    close: async () => void (await Promise.all([websockets.close(), streams.close()])),
  };
}

/**
 * Connections accepted by the kernel and not yet by the instance. Node's 511 overflowed when a
 * crowd connected at once while the event loop was busy: every connection past it, a paying
 * client's included, lost its SYN and retried after 1 s, then 3 s, 7 s. The kernel caps it at
 * net.core.somaxconn (4,096 on current Linux).
 */
const LISTEN_BACKLOG = 4_096;

function listen(server: Server, { port, host }: Config): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException) => reject(listenFailure(error, port, host));
    server.once('error', fail);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', fail);
      resolve();
    });
  });
}

/** Why the server cannot listen, in terms of PORT or HOST and what to set them to; any other error as it is. */
function listenFailure(error: NodeJS.ErrnoException, port: number, host: string): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError('PORT', `a port no other process listens on at ${host} (stop that process, or set PORT to another; 0 picks a free one)`, String(port));
    case 'EACCES':
      return new ConfigError('PORT', 'a port this user may bind (ports below 1024 need privileges: set PORT to 1024 or above)', String(port));
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError('HOST', 'a host name that resolves, or an IP address of this machine (0.0.0.0 for all of them)', host);
    case 'EADDRNOTAVAIL':
      return new ConfigError('HOST', 'an IP address of this machine (0.0.0.0 for all of them, 127.0.0.1 for this machine only)', host);
    default:
      return error;
  }
}

/** The address a client uses: a wildcard address is reached as localhost. */
function urlOf(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}
