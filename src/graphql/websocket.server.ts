import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  createSourceEventStream,
  execute,
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  print,
  validate,
  visit,
} from 'graphql';
import { CloseCode, type SubscribePayload, handleProtocols } from 'graphql-ws';
import { type Extra, useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Caller } from '../auth/caller';
import { clientAddress } from '../auth/identify-caller';
import { quotaOfCaller, socketsOfCaller, subscriptionCapOf } from '../auth/plans';
import type { Config } from '../config';
import { type Context, type Services, createContext, createLoaders } from '../context';
import { ApiError } from '../errors';
import type { Logger } from '../logger';
import { identityOf } from '../limits/identity';
import { refusal } from '../limits/limit.middleware';
import { openFileLimit, socketCeiling } from '../limits/open-file-limit';
import { SocketAdmission, type SocketRefusal, type SocketTicket } from '../limits/socket-admission';
import { createErrorFormatter } from './format-error';
import { endWithError } from '../http/http-server';
import { MAX_BODY_BYTES } from './graphql.route';
import { MAX_NESTING, nestsDeeperThan, tooDeeplyNested } from './nesting-limit';
import { checkOperationLimits } from './query-limits.plugin';
import { traceOperation } from '../telemetry';
import { conditionalRootField } from './subscription-root';

/** docs/contract.md §9: a socket whose unsent data passes this is closed with 1013. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Time a client has to send `connection_init` before the socket is closed with 4408. */
export const CONNECTION_INIT_TIMEOUT_MS = 3_000;
/** Idle sockets are pinged this often; one that misses a pong is dropped. */
export const KEEP_ALIVE_MS = 12_000;
/** How often a connected key is checked again: with the key cache's 5 s, a revoked key goes within 10 s. */
export const KEY_RECHECK_MS = 2_500;
/** Close code of a socket refused for its key (docs/contract.md §9); the reason is the §6 code. */
export const FORBIDDEN_CLOSE = CloseCode.Forbidden;
/** How long a socket closed for reading too slowly has to take its close frame before it is cut. */
export const SLOW_CLIENT_GRACE_MS = 5_000;
/** Sockets of one client address that may be waiting for their `connection_init` at once. */
export const PENDING_SOCKETS_PER_ADDRESS = 16;
/**
 * Close code of a socket over its identity's bound, known only at `connection_init` (docs/contract.md
 * §9); the reason is RATE_LIMITED. 4429 mirrors HTTP 429, as 4403 mirrors 403.
 */
export const TOO_MANY_SOCKETS_CLOSE = 4429;
/** Retry-After of a refused upgrade: a pending socket is settled within the init timeout. */
const RETRY_AFTER_SECONDS: Record<SocketRefusal, number> = {
  pending_per_address: Math.ceil(CONNECTION_INIT_TIMEOUT_MS / 1000),
  open_per_identity: 5,
  instance_ceiling: 5,
};
const TRY_AGAIN_LATER = 1013;
const GOING_AWAY = 1001;

/** What the socket layer reports (the gateway's metrics). */
export interface LiveMetrics {
  observeRefusal(reason: 'limited' | 'banned', banStarted: boolean): void;
  observeDelivered(operation: string): void;
  observeDropped(operation: string, count?: number): void;
  observeSocketRefusal(reason: SocketRefusal): void;
  watchLive(read: () => { sockets: number; subscriptions: Map<string, number> }): void;
}

export interface WebSocketDeps {
  schema: GraphQLSchema;
  services: Services;
  config: Pick<Config, 'maxQueryCost' | 'trustProxy' | 'production' | 'maxSockets'>;
  /** Browser origins allowed to open a socket: those CORS allows (docs/contract.md §8). */
  allowedOrigins: readonly string[];
  logger: Logger;
  metrics: LiveMetrics;
  limiting: boolean;
}

export interface WebSocketGateway {
  /** Serves graphql-ws upgrades of `/graphql` on this server. */
  attach(server: Server): void;
  openSockets(): number;
  /** Closes every socket with 1001 (going away). */
  close(): Promise<void>;
}

interface SocketState {
  id: string;
  socket: WebSocket;
  caller: Caller;
  /** Every key the socket presented (payload, header), checked again while it is open. */
  rawKeys: string[];
  /** Set when a subscribe started a ban: the socket closes with this reason once the error is out. */
  closeWith?: string;
}

/** A subscription that passed every check, waiting for graphql-ws to iterate it. */
interface Prepared {
  stream: AsyncIterable<unknown>;
  operation: string;
  release: () => Promise<void>;
  shape: EventShape;
}

/** What an event is executed with for one subscription; subscriptions with one key share the result. */
interface EventShape {
  document: DocumentNode;
  key: string;
}

type SocketExtra = Extra & { state?: SocketState };

/**
 * GraphQL subscriptions over the graphql-ws protocol on `/graphql` (docs/contract.md §9). Each
 * subscribe is checked as an HTTP request is (parse, validation, depth and cost), counted once in
 * the caller's windows, and holds one of the caller's subscription slots until it ends. Every
 * subscriber of one event on this instance shares the event's loaders.
 */
export function createWebSocketGateway(deps: WebSocketDeps): WebSocketGateway {
  const { schema, services, config, logger, metrics } = deps;
  const formatError = createErrorFormatter(logger);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BODY_BYTES, handleProtocols });
  const sockets = new Map<WebSocket, SocketState>();
  const prepared = new WeakMap<object, Prepared>();
  const releases = new Map<string, () => Promise<void>>();
  const active = new Map<string, number>();
  const eventLoaders = new WeakMap<object, Context['loaders']>();
  const eventResults = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();
  const admission = new SocketAdmission({ pendingPerAddress: PENDING_SOCKETS_PER_ADDRESS, perInstance: socketCeiling(config.maxSockets, openFileLimit()) });
  const tickets = new WeakMap<WebSocket, SocketTicket>();
  metrics.watchLive(() => ({ sockets: wss.clients.size, subscriptions: active }));

  const refuse = (code: ConstructorParameters<typeof ApiError>[0], message: string, extensions: Record<string, unknown> = {}) => {
    const error = new ApiError(code, message);
    Object.assign(error.extensions, extensions);
    return [error];
  };

  const deliver = (args: ExecutionArgs, subscription: Prepared): AsyncGenerator<ExecutionResult> => {
    const { caller, services: appServices } = args.contextValue as Context;
    const events = subscription.stream[Symbol.asyncIterator]();
    active.set(subscription.operation, (active.get(subscription.operation) ?? 0) + 1);
    let finished = false;
    const finish = async () => {
      if (finished) return;
      finished = true;
      active.set(subscription.operation, (active.get(subscription.operation) ?? 1) - 1);
      await subscription.release();
    };
    const ended = async (): Promise<IteratorReturnResult<undefined>> => {
      await events.return?.();
      await finish();
      return { done: true, value: undefined };
    };
    // Not an async generator function: return() must end a subscription waiting for its next event.
    const iterator: AsyncGenerator<ExecutionResult> = {
      [Symbol.asyncIterator]: () => iterator,
      async next() {
        const step = await events.next();
        if (step.done) return ended();
        const event = step.value as object;
        let results = eventResults.get(event);
        if (!results) eventResults.set(event, (results = new Map()));
        let result = results.get(subscription.shape.key);
        if (!result) {
          // Made on first use, then shared by every subscriber of the event: stock events read nothing.
          const contextValue: Context = {
            caller,
            services: appServices,
            get loaders() {
              let loaders = eventLoaders.get(event);
              if (!loaders) eventLoaders.set(event, (loaders = createLoaders(appServices)));
              return loaders;
            },
          };
          result = Promise.resolve(execute({ ...args, document: subscription.shape.document, rootValue: event, contextValue }));
          results.set(subscription.shape.key, result);
        }
        return { done: false, value: await result };
      },
      return: ended,
      async throw(error: unknown) {
        await ended();
        throw error;
      },
    };
    return iterator;
  };

  /** Everything a subscribe must pass before it starts; refusals come back as errors. */
  const prepare = async (state: SocketState, id: string, payload: SubscribePayload): Promise<ExecutionArgs | ApiError[]> => {
    if (nestsDeeperThan(payload.query, MAX_NESTING)) return [tooDeeplyNested()];
    let document;
    try {
      document = parse(payload.query);
    } catch (error) {
      return refuse('GRAPHQL_PARSE_FAILED', (error as Error).message);
    }
    for (const definition of document.definitions) {
      const conditional = definition.kind === Kind.OPERATION_DEFINITION ? conditionalRootField(document, definition) : undefined;
      if (conditional) return refuse('GRAPHQL_VALIDATION_FAILED', conditional);
    }
    const invalid = validate(schema, document);
    if (invalid.length > 0) return refuse('GRAPHQL_VALIDATION_FAILED', invalid.map((error) => error.message).join('; '));
    const operation = getOperationAST(document, payload.operationName);
    if (!operation) return refuse('OPERATION_RESOLUTION_FAILURE', 'Name the operation to run: the document has several, or none');
    if (operation.operation !== 'subscription') {
      return refuse('BAD_REQUEST', `Only subscriptions are served over WebSocket; send a ${operation.operation} to POST /graphql`);
    }
    const variableValues = payload.variables ?? {};
    try {
      checkOperationLimits(schema, document, operation, variableValues, config.maxQueryCost);
    } catch (error) {
      if (error instanceof ApiError) return [error];
      throw error;
    }

    // The slot first: a refused subscribe consumes nothing of the windows.
    const identity = identityOf(state.caller);
    const slotId = `${state.id}:${id}`;
    const cap = subscriptionCapOf(state.caller);
    if (!(await services.live.slots.acquire(identity, slotId, cap))) {
      return refuse('TOO_MANY_SUBSCRIPTIONS', `At most ${cap} subscriptions may be open at once; complete one first`);
    }
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      releases.delete(slotId);
      await services.live.slots.release(identity, slotId);
    };
    releases.set(slotId, release);
    try {
      const refusal = deps.limiting ? await countSubscribe(state) : undefined;
      if (refusal) {
        await release();
        return refusal;
      }
      const contextValue = createContext(state.caller, services);
      contextValue.backlog = {
        congested: () => state.socket.bufferedAmount > MAX_BUFFERED_BYTES,
        dropped: (count) => {
          metrics.observeDropped(rootFieldOf(operation), count);
          closeSlowSocket(state.socket);
        },
      };
      const args = { schema, document, variableValues, operationName: payload.operationName, contextValue };
      const stream = await createSourceEventStream(args);
      if (!(Symbol.asyncIterator in stream)) {
        await release();
        return (stream.errors ?? []).map((error) => (error.originalError instanceof ApiError ? error.originalError : (error as ApiError)));
      }
      const shape = eventShape(document, operation, variableValues, state.caller);
      prepared.set(contextValue, { stream, operation: rootFieldOf(operation), release, shape });
      return args;
    } catch (error) {
      await release();
      throw error;
    }
  };

  /** One subscribe counted as one request (docs/contract.md §5, §9). */
  const countSubscribe = async (state: SocketState): Promise<ApiError[] | undefined> => {
    const identity = identityOf(state.caller);
    const decision = await services.limiter.check(identity, quotaOfCaller(state.caller));
    if (decision.kind === 'allowed') return undefined;
    const error = refusal(decision, state.caller, identity, metrics, logger);
    if (decision.kind === 'banned') state.closeWith = error.code;
    error.extensions.retryAfter = decision.retryAfterSeconds;
    return [error];
  };

  useServer<Record<string, unknown>, { state?: SocketState }>(
    {
      schema,
      connectionInitWaitTimeout: CONNECTION_INIT_TIMEOUT_MS,
      onConnect: async (ctx) => {
        const { socket, request } = ctx.extra;
        const state = await identify(ctx.connectionParams, request, socket);
        const ticket = tickets.get(socket);
        ticket?.settle();
        if (typeof state === 'string') {
          socket.close(state === 'SERVICE_UNAVAILABLE' ? 1011 : FORBIDDEN_CLOSE, state);
          return false;
        }
        const identity = identityOf(state.caller);
        if (ticket && !ticket.claim(identity, socketsOfCaller(state.caller))) {
          const { address } = state.caller;
          noteRefusal('open_per_identity', { address, identity });
          socket.close(TOO_MANY_SOCKETS_CLOSE, 'RATE_LIMITED');
          return false;
        }
        sockets.set(socket, state);
        (ctx.extra as SocketExtra).state = state;
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const state = (ctx.extra as SocketExtra).state;
        if (!state) return refuse('UNAUTHENTICATED', 'Send connection_init first');
        try {
          return await traceOperation(payload.operationName, () => prepare(state, id, payload));
        } catch (error) {
          // A refusal for this id, never a 4500 that ends the socket's other subscriptions. A
          // GraphQLError comes of the client's document, which error-level lines never quote.
          if (error instanceof GraphQLError) logger.warn({ err: error.message }, 'a subscribe could not be checked');
          else logger.error({ err: (error as Error).message }, 'a subscribe failed');
          return refuse('INTERNAL_SERVER_ERROR', 'Internal server error');
        }
      },
      subscribe: (args) => {
        const subscription = prepared.get(args.contextValue as object);
        if (!subscription) return { errors: refuse('BAD_REQUEST', 'This operation was not prepared') };
        return deliver(args, subscription);
      },
      onNext: (ctx, _id, _payload, args) => {
        const operation = rootFieldOf(getOperationAST(args.document, args.operationName));
        const socket = ctx.extra.socket;
        if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
          metrics.observeDropped(operation);
          closeSlowSocket(socket);
        } else {
          metrics.observeDelivered(operation);
        }
      },
      onError: (ctx, _id, _payload, errors) => {
        const { state, socket } = ctx.extra as SocketExtra;
        // The error message is queued first; then the socket goes, as any banned caller's does.
        if (state?.closeWith) setImmediate(() => socket.close(FORBIDDEN_CLOSE, state.closeWith));
        return errors.map((error): GraphQLFormattedError => {
          const formatted = formatError(error.toJSON(), error);
          const retryAfter = error.extensions.retryAfter;
          return retryAfter === undefined ? formatted : { ...formatted, extensions: { ...formatted.extensions, retryAfter } };
        });
      },
      onComplete: async (ctx, id) => {
        const state = (ctx.extra as SocketExtra).state;
        if (state) await releases.get(`${state.id}:${id}`)?.();
      },
      onClose: (ctx) => {
        sockets.delete(ctx.extra.socket);
      },
    },
    wss,
    KEEP_ALIVE_MS,
  );

  /**
   * The socket's caller, or the §6 code it is refused with. Every key presented, in the payload or
   * the upgrade header, must be a string naming a valid key: one that is not never makes the
   * socket anonymous. With both, the payload's key is the caller.
   */
  const identify = async (
    params: Record<string, unknown> | undefined,
    request: IncomingMessage,
    socket: WebSocket,
  ): Promise<SocketState | string> => {
    const presented: unknown[] = [];
    const payloadName = ['X-API-Key', 'x-api-key'].find((name) => (params ? Object.hasOwn(params, name) : false));
    if (payloadName !== undefined) presented.push(params?.[payloadName]);
    if (request.headers['x-api-key'] !== undefined) presented.push(request.headers['x-api-key']);
    if (presented.some((value) => typeof value !== 'string')) return 'INVALID_API_KEY';
    const rawKeys = (presented as string[]).map((value) => value.trim());
    const address = clientAddress(request, config.trustProxy);
    let caller: Caller = { kind: 'anonymous', address };
    try {
      for (const rawKey of rawKeys) {
        const key = await services.apiKeys.authenticate(rawKey);
        if (!key) return 'INVALID_API_KEY';
        if (caller.kind === 'anonymous') caller = { kind: 'key', address, key };
      }
      if (deps.limiting && (await services.limiter.bannedUntil(identityOf(caller))) !== null) {
        return bannedCode(caller);
      }
    } catch (error) {
      logger.debug({ err: (error as Error).message }, 'could not check a socket key');
      return 'SERVICE_UNAVAILABLE';
    }
    return { id: randomUUID(), socket, caller, rawKeys };
  };

  /**
   * A key revoked, or an identity banned on any surface, while its sockets are open: they are
   * closed at the next check. One ban look-up per identity, however many sockets it holds.
   */
  const recheck = setInterval(() => {
    const byIdentity = new Map<string, [WebSocket, SocketState][]>();
    for (const [socket, state] of sockets) {
      for (const rawKey of state.rawKeys) {
        services.apiKeys.authenticate(rawKey).then(
          (key) => key || socket.close(FORBIDDEN_CLOSE, 'INVALID_API_KEY'),
          () => undefined,
        );
      }
      const identity = identityOf(state.caller);
      const held = byIdentity.get(identity);
      if (held) held.push([socket, state]);
      else byIdentity.set(identity, [[socket, state]]);
    }
    if (!deps.limiting) return;
    for (const [identity, held] of byIdentity) {
      services.limiter.bannedUntil(identity).then(
        (until) => until !== null && held.forEach(([socket, state]) => socket.close(FORBIDDEN_CLOSE, bannedCode(state.caller))),
        () => undefined,
      );
    }
  }, KEY_RECHECK_MS);
  recheck.unref();

  /** A socket turned away for a bound: counted and logged (who, never what it sent). */
  const noteRefusal = (reason: SocketRefusal, who: { address: string; identity?: string }) => {
    metrics.observeSocketRefusal(reason);
    logger.warn({ reason, ...who }, 'WebSocket refused');
  };

  /** An upgrade over a bound: 429 with Retry-After, before the handshake. */
  const refuseUpgrade = (socket: Duplex, reason: SocketRefusal, who: { address: string; identity?: string }) => {
    noteRefusal(reason, who);
    const retryAfter = RETRY_AFTER_SECONDS[reason];
    const message = {
      pending_per_address: `Too many WebSockets from this address have not sent connection_init; retry in ${retryAfter} s`,
      open_per_identity: 'Too many WebSockets are open with this key; close one first',
      instance_ceiling: `This instance holds as many WebSockets as it may; retry in ${retryAfter} s`,
    }[reason];
    endWithError(socket, new ApiError('RATE_LIMITED', message, { 'Retry-After': String(retryAfter) }));
  };

  /**
   * A key in the upgrade header is counted against its identity's bound before the handshake; an
   * invalid one, or one that cannot be checked now, is refused at connection_init as it would be
   * without a bound. Undefined when admitted, else the identity that is full.
   */
  const claimByHeader = async (request: IncomingMessage, ticket: SocketTicket, address: string): Promise<string | undefined> => {
    const header = request.headers['x-api-key'];
    if (typeof header !== 'string') return undefined;
    const key = await services.apiKeys.authenticate(header.trim()).catch(() => null);
    if (!key) return undefined;
    const caller: Caller = { kind: 'key', address, key };
    const identity = identityOf(caller);
    return ticket.claim(identity, socketsOfCaller(caller)) ? undefined : identity;
  };

  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer, ticket: SocketTicket) => {
    wss.handleUpgrade(request, socket, head, (ws) => {
      tickets.set(ws, ticket);
      wss.emit('connection', ws, request);
      // ws reports a client's protocol violation (a frame over 100 KiB, a malformed frame) as an
      // error and closes the socket itself (1009, 1002): the client's fault, not one to print
      // to stderr as graphql-ws's own listener would.
      ws.removeAllListeners('error');
      ws.on('error', (error) => logger.debug({ err: error.message }, 'WebSocket protocol error'));
    });
  };

  return {
    attach(server) {
      server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        const path = new URL(request.url ?? '/', 'http://localhost').pathname;
        if (path !== '/graphql') return endWithError(socket, new ApiError('NOT_FOUND', `No WebSocket is served at ${path}; use /graphql`));
        const origin = request.headers.origin;
        if (origin !== undefined && !deps.allowedOrigins.includes(origin) && !sameOrigin(origin, request.headers.host)) {
          return endWithError(socket, new ApiError('FORBIDDEN', `Origin ${origin} may not open a WebSocket here`));
        }
        const address = clientAddress(request, config.trustProxy);
        const ticket = admission.arrive(address);
        if (typeof ticket === 'string') {
          socket.on('error', () => socket.destroy());
          return refuseUpgrade(socket, ticket, { address });
        }
        // However the connection ends (refused, closed, reset), its places are given back.
        socket.once('close', () => ticket.leave());
        if (request.headers['x-api-key'] === undefined) return upgrade(request, socket, head, ticket);
        // Node stops watching an upgraded socket for errors; a reset while the key is checked must not go unheard.
        const dropOnError = () => socket.destroy();
        socket.on('error', dropOnError);
        void claimByHeader(request, ticket, address).then((full) => {
          if (full !== undefined) return refuseUpgrade(socket, 'open_per_identity', { address, identity: full });
          socket.off('error', dropOnError);
          upgrade(request, socket, head, ticket);
        });
      });
    },
    openSockets: () => wss.clients.size,
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

/**
 * A client that stops reading: over 1 MiB unsent, or MAX_PENDING_EVENTS events behind. The close
 * frame queues behind the unsent data; a client that never reads it is cut off.
 */
function closeSlowSocket(socket: WebSocket): void {
  if (socket.readyState !== socket.OPEN) return;
  socket.close(TRY_AGAIN_LATER, 'The client reads too slowly');
  setTimeout(() => socket.terminate(), SLOW_CLIENT_GRACE_MS).unref();
}

/**
 * The document each event of a subscription is executed with, and the key of its result. The
 * root field's arguments only choose which events a subscriber gets (live/live.resolver.ts), so
 * they are dropped here; subscribers whose documents then agree, with the same values for the
 * variables still used and the same role, share one execution and one result per event.
 */
function eventShape(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  caller: Caller,
): EventShape {
  const [root] = operation.selectionSet.selections;
  const stripped: OperationDefinitionNode =
    operation.selectionSet.selections.length === 1 && root.kind === Kind.FIELD
      ? { ...operation, selectionSet: { ...operation.selectionSet, selections: [{ ...root, arguments: [] }] } }
      : operation;
  const eventDocument: DocumentNode = {
    ...document,
    definitions: document.definitions.map((definition) => (definition === operation ? stripped : definition)),
  };
  const used = new Set<string>();
  visit(eventDocument, {
    OperationDefinition: (node) => (node === stripped ? undefined : false),
    VariableDefinition: () => false,
    Variable: (node) => void used.add(node.name.value),
  });
  const values = [...used].sort().map((name) => [name, variables[name]]);
  const role = caller.kind === 'key' ? caller.key.role : 'anonymous';
  return { document: eventDocument, key: `${role}\n${operation.name?.value ?? ''}\n${JSON.stringify(values)}\n${print(eventDocument)}` };
}

/** The §6 code of a banned caller. */
function bannedCode(caller: Caller): string {
  return caller.kind === 'key' ? 'API_KEY_BANNED' : 'CLIENT_BANNED';
}

/** The subscription's root field: the label of its metrics. */
function rootFieldOf(operation: OperationDefinitionNode | null | undefined): string {
  const [first] = operation?.selectionSet.selections ?? [];
  return first?.kind === 'Field' ? first.name.value : 'other';
}

/**
 * A page the gateway itself serves (the local landing page, whose embedded Sandbox opens the
 * socket from it) is same-origin, which CORS never restricts either.
 */
function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}
