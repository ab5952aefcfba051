import type { Server } from 'node:http';
import type { Logger } from '../logger';

/** How long in-flight requests may take to finish once a shutdown starts. */
export const SHUTDOWN_GRACE_MS = 10_000;

export interface ShutdownSteps {
  server: Server;
  /** WebSockets on the server: closed with 1001 once only they are left (docs/contract.md §9). */
  sockets?: { openSockets(): number; close(): Promise<void> };
  /** Then, in order: stop the app (GraphQL, limiter's Redis), close the database. */
  stopApp: () => Promise<void>;
  closeDatabase: () => Promise<void>;
  logger: Logger;
  graceMs?: number;
}

/**
 * Graceful shutdown: stop accepting connections, let in-flight requests finish (up to the
 * grace period, after which their connections are cut), then stop the app and close the database.
 */
export async function shutDown({ server, sockets, stopApp, closeDatabase, logger, graceMs = SHUTDOWN_GRACE_MS }: ShutdownSteps): Promise<void> {
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  let socketsClosing: Promise<void> | undefined;
  const closeSockets = () => (socketsClosing ??= sockets?.close() ?? Promise.resolve());
  // A keep-alive connection turns idle when its last response is sent; close it then, not after
  // the keep-alive timeout. An upgraded socket still holds the server open: once the only
  // connections left are WebSockets, HTTP has drained and they are closed.
  const sweep = setInterval(() => {
    server.closeIdleConnections();
    server.getConnections((error, count) => {
      if (!error && sockets && count <= sockets.openSockets()) void closeSockets();
    });
  }, 50);
  const deadline = setTimeout(() => {
    logger.warn({ graceMs }, 'in-flight requests did not finish in time; closing their connections');
    server.closeAllConnections();
    void closeSockets();
  }, graceMs);
  await drained;
  clearInterval(sweep);
  clearTimeout(deadline);
  await stopApp();
  await closeDatabase();
}
