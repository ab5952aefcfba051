import { createServer, type IncomingMessage, type RequestListener, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { MAX_BODY_BYTES } from '../common/bounds';
import { type Failure, failureBody, refusalFailure } from '../format-error';
import { malformedRequest, methodNotAllowed } from '../refusals';
import { tracedRequests } from '../telemetry';

/** Bounds that keep slow or stalled clients from holding sockets (docs/operating.md "Operations"). */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * Node checks the two timeouts above only this often (30 s by default, which let a slow body run
 * to about 41 s); every second keeps them to within a second.
 */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;
/** How long a socket answered and ended without a response object has to read the answer before it is destroyed. */
export const ANSWER_LINGER_MS = 2_000;

export interface HttpServerTimeouts {
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** How often Node checks the two above (CONNECTIONS_CHECKING_INTERVAL_MS). */
  checkEveryMs?: number;
  /** ANSWER_LINGER_MS for the sockets this server answers bare. */
  lingerMs?: number;
}

/**
 * The HTTP server around the app. Requests Node's parser refuses before the pipeline sees them
 * (oversized headers, malformed request lines) still get the Error object. A missing Host and an
 * expectation other than 100-continue go to the app instead, which refuses them after counting
 * them, so that they carry rate-limit headers like any other refusal (malformed-http.ts).
 */
export function createHttpServer(untraced: RequestListener, timeouts: HttpServerTimeouts = {}): Server {
  const app = tracedRequests(untraced);
  const server = createServer(
    { connectionsCheckingInterval: timeouts.checkEveryMs ?? CONNECTIONS_CHECKING_INTERVAL_MS, requireHostHeader: false },
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
    endWithError(socket, refusalFailure(malformedRequest(message)), timeouts.lingerMs);
  });
  // Without a listener Node drops a CONNECT without a word: this is no proxy.
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    const refusal = methodNotAllowed('CONNECT', '', ['GET', 'HEAD', 'POST', 'OPTIONS'], 'CONNECT is not supported: this server is not a proxy');
    endWithError(socket, refusalFailure(refusal), timeouts.lingerMs);
  });
  return server;
}

/**
 * Answers on a bare socket, where no response object exists (a request Node could not parse, a
 * CONNECT, a refused WebSocket upgrade), with the Error object and its headers (a Retry-After),
 * and closes it. The socket is destroyed once the answer is out and the client had a moment to
 * read it: a client that never closes its side would otherwise hold it in FIN_WAIT_2 for ever.
 */
export function endWithError(socket: Duplex, failure: Failure, lingerMs = ANSWER_LINGER_MS): void {
  const body = JSON.stringify(failureBody(failure, false));
  const { status } = failure.body;
  const headers = Object.entries(failure.headers)
    .filter(([name]) => name.toLowerCase() !== 'connection')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const linger = setTimeout(() => socket.destroy(), lingerMs).unref();
  socket.once('close', () => clearTimeout(linger));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n${headers}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
