import { createServer, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** Bounds that keep slow or stalled clients from holding sockets (README "Operating it"). */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

/**
 * The HTTP server around the app. Requests Node's parser refuses before Express sees them
 * (oversized headers, malformed request lines) still get the Error object.
 */
export function createHttpServer(app: RequestListener): Server {
  const server = createServer(app);
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (error.code === 'ECONNRESET' && !socket.readable)) return socket.destroy();
    const message =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 'The request headers are too large'
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'The request took too long to arrive'
          : 'The request is not valid HTTP';
    const body = JSON.stringify({ code: 'BAD_REQUEST', message, status: 400 });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
