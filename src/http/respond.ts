import type { ServerResponse } from 'node:http';
import { type Failure, failureBody } from '../format-error';
import type { Decision } from '../limits/limiter';
import { endResponse } from './lingering-close';
import { rateLimitHeaders } from '../limits/rate-limit-headers';

export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The one writer of responses the gateway makes itself (every surface): the Error object of
 * docs/contract.md §6, the rate-limit headers of §5, JSON bodies. GraphQL's own results are
 * written by the GraphQL adapter from what Apollo Server answers.
 */
export function setHeaders(res: ServerResponse, headers: Readonly<Record<string, string>>): void {
  for (const name in headers) res.setHeader(name, headers[name]);
}

/** The rate-limit headers of the limiter's decision on this request, whatever comes of it afterwards. */
export function writeRateLimitHeaders(res: ServerResponse, decision: Decision): void {
  setHeaders(res, rateLimitHeaders(decision));
}

/** A JSON body; a HEAD request gets the headers alone. */
export function writeJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  endResponse(res, res.req?.method === 'HEAD' ? undefined : text);
}

/**
 * A failure as the one formatter made it (format-error.ts), with its status and headers (a
 * Retry-After, an Allow). On the GraphQL endpoint it is a GraphQL response; elsewhere bare.
 */
export function writeError(res: ServerResponse, failure: Failure, graphql: boolean): void {
  setHeaders(res, failure.headers);
  writeJson(res, failure.body.status, failureBody(failure, graphql));
}

/** A body of its own content type (the Prometheus exposition, the explorer's page and files); a HEAD request gets the headers alone. */
export function writeText(res: ServerResponse, status: number, type: string, text: string | Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(res.req?.method === 'HEAD' ? undefined : text);
}
