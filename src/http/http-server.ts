import { createServer, type IncomingMessage, type RequestListener, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { MAX_BODY_BYTES } from '../common/bounds';
import { ApiError } from '../errors';

/** Bounds that keep slow or stalled clients from holding sockets (README "Operating it"). */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * Node checks the two timeouts above only this often (30 s by default, which let a slow body run
 * to about 41 s); every second keeps them to within a second.
 */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

export interface HttpServerTimeouts {
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/**
 * The HTTP server around the app. Requests Node's parser refuses before the pipeline sees them
 * (oversized headers, malformed request lines) still get the Error object. A missing Host and an
 * expectation other than 100-continue go to the app instead, which refuses them after counting
 * them, so that they carry rate-limit headers like any other refusal (malformed-http.ts).
 */
export function createHttpServer(app: RequestListener, timeouts: HttpServerTimeouts = {}): Server {
  const server = createServer(
    { connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS, requireHostHeader: false },
    app,
  );
  server.headersTimeout = timeouts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  server.requestTimeout = timeouts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Without a listener Node answers 417 with an empty body.
  server.on('checkExpectation', app);
  // Without a listener Node sends 100 Continue to every request that asks: a body declared past
  // the limit is not invited, and the app answers it 413 (read-body.ts) without reading it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!(Number(req.headers['content-length']) > MAX_BODY_BYTES)) res.writeContinue();
    app(req, res);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (error.code === 'ECONNRESET' && !socket.readable)) return socket.destroy();
    const message =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 'The request headers are too large'
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'The request took too long to arrive'
          : 'The request is not valid HTTP';
    endWithError(socket, new ApiError('BAD_REQUEST', message));
  });
  return server;
}

/**
 * Answers on a bare socket, where no response object exists (a request Node could not parse, a
 * refused WebSocket upgrade), with the Error object and its headers (a Retry-After), and closes it.
 */
export function endWithError(socket: Duplex, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  const headers = Object.entries(error.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json; charset=utf-8\r\n${headers}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
