import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Caller } from '../auth/caller';
import type { CallerIdentifier, Identified } from '../auth/identify-caller';
import type { Scope } from '../common/scope';
import { inTrace } from '../common/trace';
import { malformedHeader, noResource } from '../refusals';
import { parseReadAfter, READ_AFTER_HEADER, readAfterCookieOf } from '../sql/read-your-writes';
import { failureOf } from '../format-error';
import { type CorsPolicy, cors } from '../http/cors';
import { malformedHttp } from '../http/malformed-http';
import { type RequestState, requestLog } from '../http/request-log';
import { requestScope } from '../http/request-scope';
import { writeError, writeJson, writeRateLimitHeaders, writeText } from '../http/respond';
import type { Admitter } from '../limits/admit';
import type { Logger } from '../logger';
import type { healthRoutes } from '../ops/health.routes';
import type { Metrics } from '../ops/metrics';
import type { restRoutes } from '../rest/rest.routes';
import type { AdmittedRequest } from './admitted-request';
import type { ExplorerAnswer, explorerRoutes } from '../graphql/explorer/explorer.routes';
import type { graphqlOverHttp } from './graphql-http';
import type { RequestServices } from './request-services';
import type { StreamGateway } from './sse/stream.server';
import { GRAPHQL_PATH } from '../graphql/endpoints';

export interface HttpPipeline {
  logger: Logger;
  metrics: Metrics;
  cors: CorsPolicy;
  /** Every transport's one identification (auth/identify-caller). */
  identify: CallerIdentifier;
  admitter: Admitter<Caller>;
  requestServices: RequestServices;
  /** Read replicas are configured: a request's X-Read-After is read, and a REST read goes to a replica. */
  readReplicas?: boolean;
  ops: ReturnType<typeof healthRoutes>;
  /** The explorer's pages (/graphql's for a browser) and files: outside CORS and the limiter, as the operations routes. */
  explorer: ReturnType<typeof explorerRoutes>;
  graphql: ReturnType<typeof graphqlOverHttp>;
  rest: ReturnType<typeof restRoutes>;
  /**
   * Subscriptions over Server-Sent Events at `path`: identified as every request is, then admitted
   * as a long-lived connection (Admitter.admitConnection), its subscribe by Admitter.admitSubscribe.
   */
  stream?: { path: string; serve: StreamGateway['serve'] };
}

/**
 * The gateway's one request listener, on node:http. Every request: the request log, then the
 * operations routes and the explorer's pages and files (outside CORS and the limiter: a browser
 * opening /graphql gets its page), CORS (answering preflights), then the
 * pipeline: identify the caller (as every transport does) → admit (in-flight queue, windows, bans,
 * and the rate-limit headers of the decision) → refuse malformed HTTP and unverified keys → the
 * request's services → the surface (GraphQL, REST, or 404) → the one writer, for answers and
 * refusals alike. An SSE stream is identified alike, then admitted as a long-lived connection: it
 * holds no in-flight slot, its subscribe counting once (docs/decisions.md). Each request
 * has a scope from the moment it arrives (http/request-scope): what any step takes is given back
 * when it ends, and a request whose client has gone is answered nothing.
 */
export function httpPipeline(p: HttpPipeline): RequestListener {
  const log = requestLog(p.logger, p.metrics);
  const answerCors = cors(p.cors);
  const fail = (res: ServerResponse, error: unknown, graphql: boolean) => {
    // The client went away: nobody is left to answer, and the log says `aborted`.
    if (res.destroyed) return;
    if (res.headersSent) {
      p.logger.error({ err: error }, 'error after the response had started');
      res.destroy();
      return;
    }
    writeError(res, failureOf(error, p.logger), graphql);
  };

  /** A route outside CORS and the limiter: its answer written by `write`, its failure as the Error object. */
  const serveRoute = async (res: ServerResponse, write: () => Promise<void>) => {
    try {
      await write();
    } catch (error) {
      fail(res, error, false);
    }
  };

  const serveOps = (req: IncomingMessage, res: ServerResponse, route: string, path: string) =>
    serveRoute(res, async () => {
      const answer = await p.ops.answer(route, req.method ?? 'GET', path);
      if ('json' in answer) writeJson(res, answer.status, answer.json);
      else writeText(res, answer.status, answer.type, answer.text);
    });

  const serveExplorer = (req: IncomingMessage, res: ServerResponse, route: string, path: string) =>
    serveRoute(res, async () => writeExplorer(res, await p.explorer.answer(route, req.method ?? 'GET', path)));

  /** Who sent the request, or undefined when its client went away meanwhile; a key's id goes in the log. */
  const identify = async (req: IncomingMessage, state: RequestState, scope: Scope): Promise<Identified | undefined> => {
    const pending = p.identify(req);
    const identified = pending instanceof Promise ? await pending : pending;
    if (identified.caller.kind === 'key') state.keyId = identified.caller.key.id;
    return scope.aborted ? undefined : identified;
  };

  /** The admitted request, or undefined when its client went away meanwhile. */
  const admit = async (req: IncomingMessage, res: ServerResponse, { caller, identity, unverified }: Identified, state: RequestState, scope: Scope, sentAt: number): Promise<AdmittedRequest | undefined> => {
    const admitted = await p.admitter.admit(caller, identity, scope, sentAt, req.socket);
    if (scope.aborted) return undefined;
    if (admitted.decision) writeRateLimitHeaders(res, admitted.decision);
    if (admitted.refusal) throw admitted.refusal;
    const malformed = malformedHttp(req);
    if (malformed) throw malformed;
    if (unverified) throw unverified;
    const { requestId } = state;
    const refund = async () => {
      const refunded = await inTrace(scope.trace, () => p.admitter.refund(identity, admitted.decision));
      if (refunded) writeRateLimitHeaders(res, refunded);
    };
    const readAfter = p.readReplicas ? readAfterOf(req) : undefined;
    const services = p.requestServices(caller, identity, requestId, scope, readAfter);
    return { requestId, caller, identity, decision: admitted.decision, services, refund, trace: scope.trace };
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const search = queryAt < 0 ? '' : url.slice(queryAt);
    const scope = requestScope(req, res);
    const state = log(req, res, path, scope);
    const ops = p.ops.match(path);
    if (ops !== undefined) {
      state.surface = 'ops';
      state.operation = ops;
      return serveOps(req, res, ops, path);
    }
    const explorer = p.explorer.match(path);
    if (explorer !== undefined) {
      state.surface = 'explorer';
      state.operation = explorer === 'page' ? 'page' : 'asset';
      return serveExplorer(req, res, explorer, path);
    }
    const graphql = path === GRAPHQL_PATH || path === `${GRAPHQL_PATH}/`;
    if (graphql && p.explorer.wantsLanding(req.method, req.headers.accept)) {
      // Before admission: a banned or limited browser still gets the page, which counts against no quota.
      state.surface = 'explorer';
      state.operation = 'landing';
      // GraphQL's answers at this path vary on Accept too: a cache must not give one for the other.
      res.setHeader('Vary', 'Accept');
      return writeExplorer(res, p.explorer.landing());
    }
    if (answerCors(req, res)) return;
    const stream = p.stream && path === p.stream.path ? p.stream : undefined;
    if (graphql || stream) {
      state.surface = 'graphql';
      state.operation = stream ? 'stream' : 'anonymous';
    }
    try {
      // Read as it arrives, before its key is looked up: when the request was sent, at the latest.
      const sentAt = p.admitter.now();
      const identified = await identify(req, state, scope);
      if (!identified) return;
      if (stream) return await stream.serve(req, res, search, { identified, state, scope });
      const request = await admit(req, res, identified, state, scope, sentAt);
      if (!request) return;
      if (graphql) return await p.graphql(req, res, search, request, state);
      const method = req.method ?? 'GET';
      const route = p.rest.match(path, method);
      if (!route) throw noResource(method, path);
      state.surface = 'rest';
      state.operation = route.operation;
      // Every REST route only reads.
      await request.services.reads?.readFromReplica();
      await route.serve({ req, res, search, request });
    } catch (error) {
      fail(res, error, graphql || stream !== undefined);
    }
  };
  return (req, res) => void serve(req, res);
}

function writeExplorer(res: ServerResponse, answer: ExplorerAnswer): void {
  res.setHeader('Cache-Control', answer.cacheControl);
  writeText(res, answer.status, answer.type, answer.body);
}

/**
 * The commit position a client says it has seen: the further of X-Read-After's and its browser's
 * cookie's; 400 when the header names none.
 */
function readAfterOf(req: IncomingMessage): bigint | undefined {
  const cookie = readAfterCookieOf(req.headers.cookie);
  const value = req.headers[READ_AFTER_HEADER.toLowerCase()];
  if (value === undefined) return cookie;
  const position = typeof value === 'string' ? parseReadAfter(value.trim()) : undefined;
  if (position === undefined) throw malformedHeader(READ_AFTER_HEADER, 'is not a position such as 0/16B3748 (send back the one the gateway gave)', String(value));
  return cookie !== undefined && cookie > position ? cookie : position;
}
