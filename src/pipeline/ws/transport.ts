import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { CloseCode, makeServer, type ServerOptions } from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../../logger';

/** What each graphql-ws hook is given beside its context: the socket and its upgrade request. */
export interface SocketExtra {
  socket: WebSocket;
  request: IncomingMessage;
}

/**
 * The graphql-ws protocol (its `makeServer`, the transport-neutral core) over the sockets of a
 * `ws` server, as graphql-ws's own `use/ws` adapter does, but with the gateway's logger: ws reports
 * a client's protocol violation (a frame over 100 KiB, a malformed frame) as an error and closes the
 * socket itself (1009, 1002); that is the client's fault, not one to print to stderr. Idle sockets
 * are pinged every `keepAliveMs`; one that misses its pong, counted from when the ping left, is dropped.
 */
export function serveGraphQLWs<P extends Record<string, unknown>>(
  options: ServerOptions<P, SocketExtra>,
  wss: WebSocketServer,
  keepAliveMs: number,
  logger: Logger,
): void {
  const server = makeServer(options);
  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    socket.on('error', (error) => logger.debug({ err: error.message }, 'WebSocket protocol error'));
    let pongWait: NodeJS.Timeout | undefined;
    const ping = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      let answered = false;
      socket.once('pong', () => {
        answered = true;
        clearTimeout(pongWait);
      });
      // The pong is awaited from when the ping is written out: a slow reader's ping waits behind
      // its queued events, and it is the 1013 of a full queue, not a missed pong, that ends it.
      socket.ping(undefined, undefined, (error) => {
        if (!error && !answered && socket.readyState === socket.OPEN) pongWait = setTimeout(() => socket.terminate(), keepAliveMs);
      });
    }, keepAliveMs);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            batchWrites(request.socket);
            socket.send(data, (error) => (error ? reject(error) : resolve()));
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', async (data) => {
            try {
              await handle(String(data));
            } catch (error) {
              logger.error({ err: (error as Error).message }, 'a WebSocket message could not be handled');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            }
          }),
      },
      { socket, request },
    );
    socket.once('close', (code, reason) => {
      clearTimeout(pongWait);
      clearInterval(ping);
      void closed(code, String(reason));
    });
  });
}

/**
 * Holds a socket's writes until the current tick's work is done, then sends them together: the
 * events of one change (or of a burst read at once) that go to one socket's subscriptions leave
 * in one write rather than one each.
 */
function batchWrites(raw: Duplex): void {
  if (raw.writableCorked > 0) return;
  raw.cork();
  process.nextTick(() => raw.uncork());
}
