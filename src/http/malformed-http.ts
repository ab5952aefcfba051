import type { IncomingMessage } from 'node:http';
import type { ApiError } from '../errors';
import { malformedRequest } from '../refusals';

/**
 * What HTTP/1.1 forbids but Node hands over (http-server.ts): a request without Host (RFC 9112
 * §3.2) and an expectation other than 100-continue (RFC 9110 §10.1.1). Checked after admission,
 * so these are counted and carry rate-limit headers like any other bad request; the connection
 * is closed after the answer.
 */
export function malformedHttp(req: IncomingMessage): ApiError | undefined {
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    return malformedRequest('An HTTP/1.1 request needs a Host header');
  }
  const expect = req.headers.expect;
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') {
    return malformedRequest(`Expect: only 100-continue is supported, got ${JSON.stringify(expect.slice(0, 40))}`);
  }
  return undefined;
}
