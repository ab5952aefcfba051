import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult, GraphQLSchema } from 'graphql';
import type { Caller } from '../../auth/caller';
import type { Identified, KeyIdentifier } from '../../auth/identify-caller';
import { socketsOfCaller } from '../../auth/plans';
import type { Config } from '../../config';
import { STREAM_PATH } from '../../graphql/endpoints';
import type { Scope } from '../../common/scope';
import type { Services } from '../../context';
import type { ErrorCode } from '../../errors';
import { formatGraphQLError, formatResult } from '../../format-error';
import { preferredType } from '../../http/media-types';
import type { RequestState } from '../../http/request-log';
import { writeRateLimitHeaders } from '../../http/respond';
import type { Admitter } from '../../limits/admit';
import type { SocketAdmission, SocketTicket } from '../../limits/socket-admission';
import type { Logger } from '../../logger';
import { bannedCode, closedFor, methodNotAllowed, notAcceptable, socketBound } from '../../refusals';
import type { EventDelivery } from '../subscription/deliver';
import { type SubscriptionSteps, prepareSubscription } from '../subscription/prepare';
import { traceOperation } from '../../telemetry/index';
import { KEY_RECHECK_MS, type LiveMetrics, type LiveTimings, MAX_BUFFERED_BYTES } from '../ws/websocket.server';
import { recheckKeys } from '../ws/recheck';
import { COMPLETE, nextMessage, SharedMessages, STREAM_HEADERS, writeEvents } from './event-stream';
import { streamParams } from './params';
import { socketRefusalNotes } from '../subscription/refusal-notes';

/** How long a stream ended on shutdown has to take its last bytes before it is cut. */
const STREAM_CLOSE_GRACE_MS = 1_000;
/**
 * Refusals of the document itself. The graphql-sse protocol has them reported as a `next` event on
 * an accepted stream (then `complete`), which the browser's EventSource can read; every other
 * refusal is known before the stream opens and is answered with its HTTP status.
 */
const DOCUMENT_ERRORS = new Set<ErrorCode>(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'OPERATION_RESOLUTION_FAILURE', 'QUERY_TOO_COMPLEX', 'BAD_USER_INPUT']);

export interface StreamDeps {
  schema: GraphQLSchema;
  services: Services;
  config: Pick<Config, 'maxQueryCost'>;
  logger: Logger;
  metrics: LiveMetrics & { watchStreams(read: () => number): void };
  /** The check of an open stream's keys, again while it is open. */
  checkKeys: KeyIdentifier;
  admitter: Admitter<Caller>;
  /** The WebSockets' bounds: a stream counts as a socket does, per address, identity and instance. */
  admission: SocketAdmission;
  /** The WebSockets' delivery: subscribers of one shape share each event's result, whatever their transport. */
  delivery: EventDelivery;
  /** The validation of HTTP requests, held over subscriptions too. */
  validate: SubscriptionSteps['validate'];
  /** The trusted-documents policy of HTTP requests (docs/contract.md §8), held over subscriptions too. */
  trusted?: SubscriptionSteps['trusted'];
  /** The WebSockets' timings: KEY_RECHECK_MS unless given. */
  timings?: LiveTimings;
}

export interface StreamGateway {
  /**
   * One request to STREAM_PATH, its caller identified by the pipeline as every request's is; a
   * refusal is thrown as ApiError for the pipeline's writer. What the stream takes (its places,
   * its subscription, its entry) is given back when `scope` ends.
   */
  serve(req: IncomingMessage, res: ServerResponse, search: string, request: StreamRequest): Promise<void>;
  openStreams(): number;
  /** Ends every stream (without `complete`: the client reconnects, to another instance). */
  close(): Promise<void>;
}

/** A request to STREAM_PATH as the pipeline hands it over: identified, logged, scoped. */
export interface StreamRequest {
  identified: Identified;
  state: RequestState;
  scope: Scope;
}

/** One open stream, as the key re-check sees it. */
interface OpenStream {
  caller: Caller;
  identity: string;
  rawKeys: string[];
  res: ServerResponse;
  close(code: number, reason: string): void;
}

/** What one stream sends: its results, and the root field that labels its metrics. */
interface StreamSource {
  source: AsyncIterable<ExecutionResult>;
  operation: string;
}

/**
 * GraphQL subscriptions over the graphql-sse protocol, distinct connections mode (one subscription
 * per HTTP request), on the steps of every transport: the caller identified by the pipeline as
 * every HTTP request is, the stream admitted as a socket is (per instance and identity, an invalid
 * key counted and a ban refused by Admitter.admitConnection), the subscription prepared (subscription/prepare: document checks, a slot, one count in the
 * windows) and delivered with every other subscriber of its event (subscription/deliver), the key
 * checked again while the stream is open (ws/recheck). The protocol's messages are written here
 * (event-stream), each event's `next` message made once for all the streams that share its result.
 */
export function createStreamGateway(deps: StreamDeps): StreamGateway {
  const { schema, services, config, logger, metrics, admitter, admission, delivery } = deps;
  const steps = { schema, services, admitter, maxQueryCost: config.maxQueryCost, validate: deps.validate, trusted: deps.trusted };
  const streams = new Map<OpenStream, OpenStream>();
  metrics.watchStreams(() => streams.size);

  // Every error of an event through the one formatter. Subscriptions yield whole results, never incremental patches.
  const messages = new SharedMessages((result) => formatResult(result, logger));

  const cutSlowReader = (res: ServerResponse, operation: string, count = 1) => {
    metrics.observeDropped(operation, count);
    if (!res.destroyed) logger.warn({ unsent: res.writableLength }, 'SSE stream cut: the client reads too slowly');
    res.destroy();
  };

  const noteRefusal = socketRefusalNotes((reason) => metrics.observeSocketRefusal(reason), logger, 'SSE stream refused');

  /** The caller, once its stream is admitted: counted when unverified, not banned, within its bound. */
  const admit = async (res: ServerResponse, ticket: SocketTicket, { identified, scope }: StreamRequest) => {
    const { caller, identity, unverified, keys } = identified;
    // Identified already: the stream is no longer one that has not said who it is.
    ticket.settle();
    const admitted = await admitter.admitConnection(caller, identity, unverified, scope.trace);
    if (admitted.decision) writeRateLimitHeaders(res, admitted.decision);
    if (admitted.refusal) throw admitted.refusal;
    if (!ticket.claim(identity, socketsOfCaller(caller))) {
      noteRefusal('open_per_identity', { address: caller.address, identity });
      throw socketBound('open_per_identity', 'stream');
    }
    return { caller, identity, rawKeys: [...keys] };
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, search: string, request: StreamRequest): Promise<void> => {
    const { state, scope } = request;
    state.operation = 'stream';
    const method = req.method;
    if (method === 'PUT' || method === 'DELETE') {
      const message = "graphql-sse's single connection mode is not served: subscribe in distinct connections mode (one POST per subscription)";
      throw methodNotAllowed(method, STREAM_PATH, ['GET', 'POST'], message);
    }
    if (method !== 'GET' && method !== 'POST') throw methodNotAllowed(method, STREAM_PATH, ['GET', 'POST']);
    if (!preferredType(req.headers.accept ?? '', ['text/event-stream'])) throw notAcceptable(['text/event-stream']);

    const address = request.identified.caller.address;
    const ticket = admission.arrive(address);
    if (typeof ticket === 'string') {
      noteRefusal(ticket, { address });
      throw socketBound(ticket, 'stream');
    }
    // However the request ends (refused, finished, reset), its places are given back.
    scope.defer(() => ticket.leave());
    const who = await admit(res, ticket, request);
    if (scope.aborted) return;
    const params = await streamParams(req, search);
    if (scope.aborted) return;

    const result = await traceOperation(params.operationName, scope.trace, (trace) => prepareSubscription(
      steps,
      {
        caller: who.caller,
        identity: who.identity,
        slotId: `sse:${randomUUID()}`,
        backlogOf: (operation) => ({ congested: () => res.writableLength > MAX_BUFFERED_BYTES, dropped: (count) => cutSlowReader(res, operation, count) }),
        counted: (decision) => writeRateLimitHeaders(res, decision),
        trace,
      },
      params,
    ));
    let source: StreamSource;
    if (Array.isArray(result)) {
      // Refused with its status and headers (a Retry-After) by the pipeline's writer.
      if (!result.every((error) => DOCUMENT_ERRORS.has(error.code))) throw result[0];
      // Formatted as every event is.
      source = { source: once({ errors: result }), operation: 'other' };
    } else {
      const delivered = delivery.deliver(result.args, result.prepared);
      // The subscription's slot and its place among the delivered: given back with the stream.
      scope.defer(() => void delivered.return(undefined));
      source = { source: delivered, operation: result.prepared.operation };
    }
    await stream(res, source, who, scope);
  };

  /** Opens the stream and writes what the source yields until either side ends. */
  const stream = async (res: ServerResponse, { source, operation }: StreamSource, who: { caller: Caller; identity: string; rawKeys: string[] }, scope: Scope) => {
    if (scope.aborted) return;
    for (const [name, value] of Object.entries(STREAM_HEADERS)) res.setHeader(name, value);
    res.statusCode = 200;
    const open: OpenStream = {
      ...who,
      res,
      // A revoked or banned key: the refusal as the stream's last result, then `complete`, so that the client does not retry.
      close: (_code, reason) => {
        if (res.writableEnded || res.destroyed) return;
        const errors = [formatGraphQLError(closedFor(reason), logger)];
        res.end(nextMessage({ errors }) + COMPLETE);
      },
    };
    streams.set(open, open);
    // A stream whose client has already gone is deleted at once.
    scope.defer(() => streams.delete(open));
    res.flushHeaders();
    const keepsUp = () => {
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        cutSlowReader(res, operation);
        return false;
      }
      metrics.observeDelivered(operation);
      return true;
    };
    await writeEvents(source, { res, keepsUp }, messages);
  };

  const recheck = recheckKeys(streams, { identify: deps.checkKeys, admitter, everyMs: deps.timings?.keyRecheckMs ?? KEY_RECHECK_MS, bannedCode, forbiddenClose: 0 });

  return {
    serve,
    openStreams: () => streams.size,
    async close() {
      clearInterval(recheck);
      const ended = [...streams.keys()].map(({ res }) => new Promise<void>((resolve) => {
        if (res.closed) return resolve();
        res.once('close', () => resolve());
        res.end();
        // A client that never reads the end of its stream is cut off.
        setTimeout(() => res.destroy(), STREAM_CLOSE_GRACE_MS).unref();
      }));
      await Promise.all(ended);
    },
  };
}

/** A source of one result: the document's refusal, then `complete`. */
async function* once(result: ExecutionResult): AsyncGenerator<ExecutionResult> {
  yield result;
}
