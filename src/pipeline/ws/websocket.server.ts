import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { type GraphQLFormattedError, type GraphQLSchema, getOperationAST, GraphQLError } from 'graphql';
import { CloseCode, handleProtocols } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Caller } from '../../auth/caller';
import type { CallerIdentifier, KeyIdentifier } from '../../auth/identify-caller';
import { socketsOfCaller } from '../../auth/plans';
import { MAX_BODY_BYTES } from '../../common/bounds';
import type { Config } from '../../config';
import type { Services } from '../../context';
import { ApiError } from '../../errors';
import { formatGraphQLError, formatResult } from '../../format-error';
import type { Logger } from '../../logger';
import type { Admitter } from '../../limits/admit';
import { openFileLimit, socketCeiling } from '../../limits/open-file-limit';
import { SocketAdmission, type SocketRefusal, type SocketTicket } from '../../limits/socket-admission';
import { bannedCode } from '../../refusals';
import { EventDelivery, type Prepared, rootFieldOf } from '../subscription/deliver';
import { type SubscriptionSteps, prepareSubscription, refusal } from '../subscription/prepare';
import { recheckKeys } from './recheck';
import { serveGraphQLWs } from './transport';
import { CONNECTION_INIT_TIMEOUT_MS, serveUpgrades } from './upgrade';
import { traceOperation } from '../../telemetry/index';
import { socketRefusalNotes } from '../subscription/refusal-notes';

export { CONNECTION_INIT_TIMEOUT_MS };
/** docs/contract.md §9: a socket whose unsent data passes this is closed with 1013. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Idle sockets are pinged this often; one that misses a pong is dropped. */
export const KEEP_ALIVE_MS = 12_000;
/** How often a connected key is checked again: with the key cache's 5 s, a revoked key goes within 10 s. */
export const KEY_RECHECK_MS = 2_500;
/** Close code of a socket refused for its key (docs/contract.md §9); the reason is the §6 code. */
export const FORBIDDEN_CLOSE = CloseCode.Forbidden;
/**
 * How long a socket closed for reading too slowly may go without reading anything of what is
 * queued ahead of its close frame before it is cut.
 */
export const SLOW_CLIENT_GRACE_MS = 5_000;
/** Sockets of one client address that may be waiting for their `connection_init` at once. */
export const PENDING_SOCKETS_PER_ADDRESS = 16;
/**
 * Close code of a socket over its identity's bound, known only at `connection_init`, or whose
 * invalid key finds its address over its quota (docs/contract.md §9); the reason is RATE_LIMITED.
 * 4429 mirrors HTTP 429, as 4403 mirrors 403.
 */
export const TOO_MANY_SOCKETS_CLOSE = 4429;
const TRY_AGAIN_LATER = 1013;
const GOING_AWAY = 1001;

/** What the socket layer reports (the gateway's metrics). */
export interface LiveMetrics {
  observeDelivered(operation: string): void;
  observeDropped(operation: string, count?: number): void;
  observeSocketRefusal(reason: SocketRefusal): void;
  watchLive(read: () => { sockets: number; subscriptions: Map<string, number> }): void;
}

export interface WebSocketDeps {
  schema: GraphQLSchema;
  services: Services;
  config: Pick<Config, 'maxQueryCost' | 'trustProxy' | 'maxSockets'>;
  /** Browser origins allowed to open a socket: those CORS allows (docs/contract.md §8). */
  allowedOrigins: readonly string[];
  logger: Logger;
  metrics: LiveMetrics;
  /** The same steps as HTTP requests: who the caller is, and the windows and bans. */
  identify: CallerIdentifier;
  /** The check of an open socket's keys, again while it is open. */
  checkKeys: KeyIdentifier;
  admitter: Admitter<Caller>;
  /** The validation of HTTP requests, held over subscriptions too. */
  validate: SubscriptionSteps['validate'];
  /** The trusted-documents policy of HTTP requests (docs/contract.md §8), held over subscriptions too. */
  trusted?: SubscriptionSteps['trusted'];
  /** KEY_RECHECK_MS and CONNECTION_INIT_TIMEOUT_MS unless given (tests that wait for them give less). */
  timings?: LiveTimings;
}

/** The waits of open sockets and streams; production keeps the defaults. */
export interface LiveTimings {
  keyRecheckMs?: number;
  connectionInitTimeoutMs?: number;
}

export interface WebSocketGateway {
  /** Serves graphql-ws upgrades of `/graphql` on this server. */
  attach(server: Server): void;
  openSockets(): number;
  /** Closes every socket with 1001 (going away). */
  close(): Promise<void>;
  /** The connection bounds and event delivery, shared with the SSE transport. */
  readonly admission: SocketAdmission;
  readonly delivery: EventDelivery;
}

/** A socket past its `connection_init`. */
export interface SocketState {
  id: string;
  socket: WebSocket;
  caller: Caller;
  identity: string;
  /** Every key the socket presented (payload, header), checked again while it is open. */
  rawKeys: string[];
  /** Set when a subscribe started a ban: the socket closes with this reason once the error is out. */
  closeWith?: string;
}

const BANNED_CODES = new Set<string>([bannedCode({ kind: 'key' }), bannedCode({ kind: 'anonymous' })]);

/**
 * GraphQL subscriptions over the graphql-ws protocol on `/graphql` (docs/contract.md §9), on the
 * steps every transport uses: the upgrade admitted (ws/upgrade), the caller identified at
 * `connection_init` as an HTTP request is, each subscribe prepared (subscription/prepare: parse,
 * validation, depth and cost, a slot, one count in the windows) and delivered with every other
 * subscriber of its event (subscription/deliver), the keys checked again while open (ws/recheck).
 */
export function createWebSocketGateway(deps: WebSocketDeps): WebSocketGateway {
  const { schema, services, config, logger, metrics, admitter } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY_BYTES, handleProtocols });
  const sockets = new Map<WebSocket, SocketState>();
  const prepared = new WeakMap<object, Prepared>();
  const releases = new Map<string, () => Promise<void>>();
  const delivery = new EventDelivery();
  const admission = new SocketAdmission({ pendingPerAddress: PENDING_SOCKETS_PER_ADDRESS, perInstance: socketCeiling(config.maxSockets, openFileLimit()) });
  const tickets = new WeakMap<WebSocket, SocketTicket>();
  const steps = { schema, services, admitter, maxQueryCost: config.maxQueryCost, validate: deps.validate, trusted: deps.trusted };
  metrics.watchLive(() => ({ sockets: wss.clients.size, subscriptions: delivery.active }));

  const noteRefusal = socketRefusalNotes((reason) => metrics.observeSocketRefusal(reason), logger, 'WebSocket refused');

  /**
   * The socket's caller, identified and admitted as every transport's is (an invalid key counted
   * against the client address, then refused; a banned identity refused), or the §6 code it is
   * refused with.
   */
  const connect = async (params: Record<string, unknown> | undefined, request: IncomingMessage, socket: WebSocket): Promise<SocketState | string> => {
    try {
      const { caller, identity, unverified, keys } = await deps.identify(request, params);
      const { refusal } = await admitter.admitConnection(caller, identity, unverified);
      if (refusal) return refusal.code;
      return { id: randomUUID(), socket, caller, identity, rawKeys: [...keys] };
    } catch (error) {
      if (error instanceof ApiError) return error.code;
      logger.debug({ err: (error as Error).message }, 'could not check a socket key');
      return 'SERVICE_UNAVAILABLE';
    }
  };

  serveGraphQLWs<Record<string, unknown>>(
    {
      schema,
      connectionInitWaitTimeout: deps.timings?.connectionInitTimeoutMs ?? CONNECTION_INIT_TIMEOUT_MS,
      onConnect: async (ctx) => {
        const { socket, request } = ctx.extra;
        const state = await connect(ctx.connectionParams, request, socket);
        const ticket = tickets.get(socket);
        ticket?.settle();
        // Closed while its key was checked: its places are given back already, and no state is kept.
        if (socket.readyState !== socket.OPEN) return false;
        if (typeof state === 'string') {
          socket.close(closeCodeOf(state), state);
          return false;
        }
        if (ticket && !ticket.claim(state.identity, socketsOfCaller(state.caller))) {
          noteRefusal('open_per_identity', { address: state.caller.address, identity: state.identity });
          socket.close(TOO_MANY_SOCKETS_CLOSE, 'RATE_LIMITED');
          return false;
        }
        sockets.set(socket, state);
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const state = sockets.get(ctx.extra.socket);
        if (!state) return refusal('UNAUTHENTICATED', 'Send connection_init first');
        try {
          return await traceOperation(payload.operationName, 'root', async (trace) => {
            const slotId = `${state.id}:${id}`;
            const backlogOf = (operation: string) => ({
              congested: () => state.socket.bufferedAmount > MAX_BUFFERED_BYTES,
              dropped: (count: number) => {
                metrics.observeDropped(operation, count);
                closeSlowSocket(state.socket);
              },
            });
            const result = await prepareSubscription(steps, { caller: state.caller, identity: state.identity, slotId, backlogOf, trace }, payload);
            if (Array.isArray(result)) {
              if (result.some((error) => BANNED_CODES.has(error.code))) state.closeWith = result[0].code;
              return result;
            }
            const { release } = result.prepared;
            const releaseOnce = async () => {
              releases.delete(slotId);
              await release();
            };
            releases.set(slotId, releaseOnce);
            prepared.set(result.args.contextValue as object, { ...result.prepared, release: releaseOnce });
            return result.args;
          });
        } catch (error) {
          // A refusal for this id, never a 4500 that ends the socket's other subscriptions. A
          // GraphQLError comes of the client's document, which error-level lines never quote.
          if (error instanceof GraphQLError) logger.warn({ err: error.message }, 'a subscribe could not be checked');
          else logger.error({ err: (error as Error).message }, 'a subscribe failed');
          return refusal('INTERNAL_SERVER_ERROR', 'Internal server error');
        }
      },
      subscribe: (args) => {
        const subscription = prepared.get(args.contextValue as object);
        if (!subscription) return { errors: refusal('BAD_REQUEST', 'This operation was not prepared') };
        return delivery.deliver(args, subscription);
      },
      onNext: (ctx, _id, _payload, args, result) => {
        const operation = prepared.get(args.contextValue as object)?.operation ?? rootFieldOf(getOperationAST(args.document, args.operationName));
        const socket = ctx.extra.socket;
        if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
          metrics.observeDropped(operation);
          closeSlowSocket(socket);
        } else {
          metrics.observeDelivered(operation);
        }
        // Every error of an event (a loader's, a resolver's) through the one formatter.
        return formatResult(result, logger);
      },
      onError: (ctx, _id, _payload, errors) => {
        const { socket } = ctx.extra;
        const state = sockets.get(socket);
        // The error message is queued first; then the socket goes, as any banned caller's does.
        if (state?.closeWith) setImmediate(() => socket.close(FORBIDDEN_CLOSE, state.closeWith));
        return errors.map((error): GraphQLFormattedError => formatGraphQLError(error, logger));
      },
      onComplete: async (ctx, id) => {
        const state = sockets.get(ctx.extra.socket);
        if (state) await releases.get(`${state.id}:${id}`)?.();
      },
      onClose: (ctx) => {
        sockets.delete(ctx.extra.socket);
      },
    },
    wss,
    KEEP_ALIVE_MS,
    logger,
  );

  const recheck = recheckKeys(sockets, { identify: deps.checkKeys, admitter, everyMs: deps.timings?.keyRecheckMs ?? KEY_RECHECK_MS, bannedCode, forbiddenClose: FORBIDDEN_CLOSE });

  return {
    attach(server) {
      serveUpgrades(server, { wss, admission, allowedOrigins: deps.allowedOrigins, trustProxy: config.trustProxy, identify: deps.identify, noteRefusal }, tickets);
    },
    openSockets: () => wss.clients.size,
    admission,
    delivery,
    async close() {
      clearInterval(recheck);
      const closed = [...wss.clients].map((socket) => new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close(GOING_AWAY, 'The server is shutting down');
        // A client that never answers the close frame is cut off.
        setTimeout(() => socket.terminate(), 1_000).unref();
      }));
      await Promise.all(closed);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** The close code of a socket refused at `connection_init` with the §6 `code`. */
function closeCodeOf(code: string): number {
  if (code === 'SERVICE_UNAVAILABLE') return 1011;
  return code === 'RATE_LIMITED' ? TOO_MANY_SOCKETS_CLOSE : FORBIDDEN_CLOSE;
}

/**
 * A client that stops reading: over 1 MiB unsent, or MAX_PENDING_EVENTS events behind. The close
 * frame queues behind the unsent data; a client that never reads it is cut off.
 */
function closeSlowSocket(socket: WebSocket): void {
  if (socket.readyState !== socket.OPEN) return;
  socket.close(TRY_AGAIN_LATER, 'The client reads too slowly');
  // A client still reading, however slowly, reaches its 1013; one that reads nothing for the grace
  // is cut off. Once all is with the kernel, ws's own close timeout bounds the wait.
  let unsent = socket.bufferedAmount;
  const watch = setInterval(() => {
    const now = socket.bufferedAmount;
    if (socket.readyState === socket.CLOSED || now === 0) clearInterval(watch);
    else if (now >= unsent) {
      clearInterval(watch);
      socket.terminate();
    }
    unsent = now;
  }, SLOW_CLIENT_GRACE_MS).unref();
}
