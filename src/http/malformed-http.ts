import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

/**
 * Refuses what HTTP/1.1 forbids but Node hands over (http-server.ts): a request without Host
 * (RFC 9112 §3.2) and an expectation other than 100-continue (RFC 9110 §10.1.1). It runs after
 * the limiter, so these are counted and carry rate-limit headers like any other bad request.
 */
export const refuseMalformedHttp: RequestHandler = (req, res, next) => {
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    res.set('Connection', 'close');
    throw new ApiError('BAD_REQUEST', 'An HTTP/1.1 request needs a Host header');
  }
  const expect = req.headers.expect;
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') {
    res.set('Connection', 'close');
    throw new ApiError('BAD_REQUEST', `Expect: only 100-continue is supported, got ${JSON.stringify(expect.slice(0, 40))}`);
  }
  next();
};
