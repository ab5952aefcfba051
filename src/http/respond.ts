import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../errors';
import type { Decision } from '../limits/limiter';
import { rateLimitHeaders } from '../limits/rate-limit-headers';

const JSON_TYPE = 'application/json; charset=utf-8';

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
  res.end(res.req?.method === 'HEAD' ? undefined : text);
}

/**
 * The Error object with its status and headers (a Retry-After, an Allow). On the GraphQL endpoint
 * it is a GraphQL response, `{errors: [{message, extensions: {code, status}}]}`; elsewhere bare.
 */
export function writeError(res: ServerResponse, body: ErrorBody, graphql: boolean, headers: Readonly<Record<string, string>> = {}): void {
  setHeaders(res, headers);
  const { code, message, status } = body;
  if (graphql) writeGraphQLErrors(res, status, [{ message, extensions: { code, status } }]);
  else writeJson(res, status, { code, message, status });
}

/** A GraphQL response of errors alone, each carrying the Error object's code and status in its extensions. */
export function writeGraphQLErrors(res: ServerResponse, status: number, errors: readonly GraphQLErrorObject[]): void {
  writeJson(res, status, { errors });
}

export interface GraphQLErrorObject {
  message: string;
  locations?: readonly { line: number; column: number }[];
  extensions: { code: string; status: number };
}

/** A body of its own content type (the Prometheus exposition, the explorer's page and files); a HEAD request gets the headers alone. */
export function writeText(res: ServerResponse, status: number, type: string, text: string | Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(res.req?.method === 'HEAD' ? undefined : text);
}
