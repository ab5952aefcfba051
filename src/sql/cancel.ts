import { connect } from 'node:net';
import type { Client } from 'pg';

/** The protocol's CancelRequest code (PostgreSQL docs, "Message Formats"). */
const CANCEL_REQUEST_CODE = 80877102;
/** A cancel that gets no answer is given up on: it is a courtesy to the database, never awaited. */
const CANCEL_TIMEOUT_MS = 2_000;

/**
 * Asks the server to cancel the statement `client` is running, as `psql`'s Ctrl-C does: the
 * protocol's CancelRequest with the backend's key, on a connection of its own (the pool's may all
 * be busy). node-postgres has no public cancel; its connection's process id and secret key come
 * from the server's BackendKeyData at start-up. A server that sent none, or that does not know the
 * request (the embedded PGlite closes the connection), cancels nothing: the statement runs to its
 * end and is charged as any other.
 */
export function cancelRunning(client: Client): void {
  const { processID, secretKey } = client as Client & { processID?: number | null; secretKey?: number | null };
  if (typeof processID !== 'number' || typeof secretKey !== 'number') return;
  const request = Buffer.alloc(16);
  request.writeInt32BE(16, 0);
  request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  request.writeInt32BE(processID, 8);
  request.writeInt32BE(secretKey, 12);
  const socket = connect(client.port, client.host, () => socket.end(request));
  socket.setTimeout(CANCEL_TIMEOUT_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.unref();
}
