import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { ApiError } from '../errors';
import { identityOf } from '../limits/identity';
import type { ApiKeyService } from './api-key.service';
import type { Caller } from './caller';
import { hashApiKey } from './key-secret';

/** Who sent a request, and whom it is counted against. */
export interface Identified {
  caller: Caller;
  /** The identity of the limiter's windows: the caller's, or an unverifiable key's (below). */
  identity: string;
  /**
   * Why the request is refused once it has been counted: an X-API-Key that names no valid key
   * (401), or one that could not be checked (the database is down, say: 503).
   */
  unverified?: unknown;
}

/**
 * The first step of every request: resolves X-API-Key to a caller. An unknown or revoked key is
 * not treated as anonymous: the request is counted against its client address, then refused
 * (docs/contract.md §4, §5). A request whose key cannot be checked at all is counted too, then
 * fails as the check did (503 when the database is down), still with its rate-limit headers.
 * Without a key the answer comes at once, with no promise to wait for.
 */
export function callerIdentifier(apiKeys: ApiKeyService, trustProxy: boolean) {
  return (request: IncomingMessage): Identified | Promise<Identified> => {
    const address = clientAddress(request, trustProxy);
    const anonymous: Caller = { kind: 'anonymous', address };
    const header = request.headers['x-api-key'];
    if (header === undefined) return { caller: anonymous, identity: identityOf(anonymous) };
    const raw = (Array.isArray(header) ? header.join(', ') : header).trim();
    return apiKeys.authenticate(raw).then(
      (key): Identified => {
        if (!key) return { caller: anonymous, identity: identityOf(anonymous), unverified: invalidApiKey() };
        const caller: Caller = { kind: 'key', address, key };
        return { caller, identity: identityOf(caller) };
      },
      // Counted against the key it claims (by hash, on the FREE quota), not against its address:
      // an outage must not use up, or ban, everyone else behind that address.
      (error: unknown): Identified => ({ caller: anonymous, identity: `unverified:${hashApiKey(raw).slice(0, 32)}`, unverified: error }),
    );
  };
}

export function invalidApiKey(): ApiError {
  return new ApiError('INVALID_API_KEY', 'The X-API-Key header names no valid key');
}

/**
 * The client's address, for HTTP requests and WebSocket upgrades alike: behind a trusted proxy
 * (one hop), the X-Forwarded-For entry that proxy added, the right-most, but only when it is an IP
 * address; any other text ("garbage", "1.1.1.1:1234") would otherwise let a client choose a fresh
 * identity per request. Then the socket's address stands.
 */
export function clientAddress(request: IncomingMessage, trustProxy: boolean): string {
  const forwarded = request.headers['x-forwarded-for'];
  const added = trustProxy && typeof forwarded === 'string' ? forwarded.split(',').pop()?.trim() : undefined;
  if (added && isIP(added)) return added;
  return request.socket.remoteAddress ?? 'unknown';
}
