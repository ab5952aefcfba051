import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Caller } from '../../auth/caller';
import { type CallerIdentifier, clientAddress, type TrustProxy } from '../../auth/identify-caller';
import { socketsOfCaller } from '../../auth/plans';
import { ApiError } from '../../errors';
import { refusalFailure } from '../../format-error';
import { endWithError } from '../../http/http-server';
import type { SocketAdmission, SocketRefusal, SocketTicket } from '../../limits/socket-admission';
import { socketBound } from '../../refusals';
import { GRAPHQL_PATH } from '../../graphql/endpoints';
import type { RefusedClient } from '../subscription/refusal-notes';

/** Time a client has to send `connection_init` before the socket is closed with 4408. */
export const CONNECTION_INIT_TIMEOUT_MS = 3_000;

export interface UpgradeDeps {
  wss: WebSocketServer;
  admission: SocketAdmission;
  /** Browser origins allowed to open a socket: those CORS allows (docs/contract.md §8). */
  allowedOrigins: readonly string[];
  trustProxy: TrustProxy;
  /** Every transport's identification: here of the upgrade request's header key alone. */
  identify: CallerIdentifier;
  /** A socket turned away for a bound: counted and logged. */
  noteRefusal: (reason: SocketRefusal, who: RefusedClient) => void;
}

/**
 * Serves upgrades of `/graphql` on `server` (docs/contract.md §9): the path must be `/graphql`
 * and a browser's Origin one CORS allows, and the socket admission must have room (sockets of
 * this address not yet initialised, open sockets of the identity named in the upgrade's header,
 * open sockets of the instance); over a bound the upgrade is refused 429 before the handshake.
 * Each upgraded socket's ticket is kept in `tickets` for its `connection_init`.
 */
export function serveUpgrades(server: Server, deps: UpgradeDeps, tickets: WeakMap<WebSocket, SocketTicket>): void {
  const { wss } = deps;

  const refuseUpgrade = (socket: Duplex, reason: SocketRefusal, who: { address: string; identity?: string }) => {
    deps.noteRefusal(reason, who);
    endWithError(socket, refusalFailure(socketBound(reason, 'websocket')));
  };

  /**
   * A key in the upgrade header is counted against its identity's bound before the handshake; an
   * invalid one, or one that cannot be checked now, is refused at connection_init as it would be
   * without a bound. Undefined when admitted, else the identity that is full.
   */
  const claimByHeader = async (request: IncomingMessage, ticket: SocketTicket): Promise<string | undefined> => {
    const identified = await Promise.resolve(deps.identify(request)).catch(() => undefined);
    if (!identified || identified.unverified || identified.caller.kind !== 'key') return undefined;
    const { caller, identity } = identified;
    return ticket.claim(identity, socketsOfCaller(caller as Caller)) ? undefined : identity;
  };

  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer, ticket: SocketTicket) => {
    wss.handleUpgrade(request, socket, head, (ws) => {
      tickets.set(ws, ticket);
      wss.emit('connection', ws, request);
    });
  };

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== GRAPHQL_PATH) return endWithError(socket, refusalFailure(new ApiError('NOT_FOUND', `No WebSocket is served at ${path}; use ${GRAPHQL_PATH}`)));
    const origin = request.headers.origin;
    if (origin !== undefined && !deps.allowedOrigins.includes(origin) && !sameOrigin(origin, request.headers.host)) {
      return endWithError(socket, refusalFailure(new ApiError('FORBIDDEN', `Origin ${origin} may not open a WebSocket here`)));
    }
    const address = clientAddress(request, deps.trustProxy);
    const ticket = deps.admission.arrive(address);
    if (typeof ticket === 'string') {
      socket.on('error', () => socket.destroy());
      return refuseUpgrade(socket, ticket, { address });
    }
    // However the connection ends (refused, closed, reset), its places are given back.
    socket.once('close', () => ticket.leave());
    if (typeof request.headers['x-api-key'] !== 'string') return upgrade(request, socket, head, ticket);
    // Node stops watching an upgraded socket for errors; a reset while the key is checked must not go unheard.
    const dropOnError = () => socket.destroy();
    socket.on('error', dropOnError);
    void claimByHeader(request, ticket).then((full) => {
      // Gone while its key was checked: its places are given back already.
      if (socket.destroyed) return;
      if (full !== undefined) return refuseUpgrade(socket, 'open_per_identity', { address, identity: full });
      socket.off('error', dropOnError);
      upgrade(request, socket, head, ticket);
    });
  });
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
