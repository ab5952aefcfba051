import { Client, type ClientBase, type ClientConfig } from 'pg';

/** A cancel that gets no answer is given up on: it is a courtesy to the database, never awaited. */
const CANCEL_TIMEOUT_MS = 2_000;

interface Backend {
  /** The server process serving the connection. */
  readonly pid: number;
  /** Where a connection of the cancel's own is made: the same server as the connection's. */
  readonly server: ClientConfig;
}

/** The backend of each connection whose pid `readBackendPid` read. */
const backends = new WeakMap<object, Backend>();

/**
 * Makes the statements of a pool's connections cancellable by `cancelRunning`: given as the
 * pool's `onConnect` (pg-pool's hook for a new connection, awaited before the connection is handed
 * out), it reads the connection's backend pid with `SELECT pg_backend_pid()` before any statement
 * of the gateway's is sent on it. `server` is where the cancel connects. Only for a session-mode
 * pool: behind a transaction-mode pooler a connection has no backend of its own, and a pid read
 * once would name another session's later.
 */
export function readBackendPid(server: ClientConfig): (client: ClientBase) => Promise<void> {
  return async (client) => {
    const pid = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid').then(
      ({ rows }) => rows[0]?.pid,
      () => undefined,
    );
    if (pid !== undefined) backends.set(client, { pid, server });
  };
}

/**
 * Asks the server to cancel the statement `client` is running: `pg_cancel_backend` with its
 * backend's pid, on a connection of its own (the pool's may all be busy). A connection of a pool
 * without `readBackendPid` (the embedded PGlite's, which runs one statement at a time, or a
 * transaction-mode pool's) cancels nothing: the statement runs to its end and is charged as any
 * other. The caller never reuses a connection it cancelled on, so the pid names no later statement.
 */
export function cancelRunning(client: object): void {
  const backend = backends.get(client);
  if (backend === undefined) return;
  const { pid } = backend;
  void (async () => {
    const canceller = new Client({ ...backend.server, connectionTimeoutMillis: CANCEL_TIMEOUT_MS, query_timeout: CANCEL_TIMEOUT_MS });
    canceller.on('error', () => undefined);
    try {
      await canceller.connect();
      await canceller.query('SELECT pg_cancel_backend($1)', [pid]);
    } catch {
      // A cancel that fails leaves the statement to its own end, as with no cancel at all.
    } finally {
      await canceller.end().catch(() => undefined);
    }
  })();
}
