import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import './request';
import type { ApiKeyService } from './api-key.service';
import { hashApiKey } from './key-secret';

/**
 * Resolves X-API-Key to a caller. An unknown or revoked key is not treated as anonymous: the
 * request is counted against its client address, then refused (docs/contract.md §4, §5). A request whose
 * key cannot be checked at all is counted too, then fails as the check did (503 when the
 * database is down), still with its rate-limit headers.
 */
export function identifyCaller(apiKeys: ApiKeyService, trustProxy: boolean): RequestHandler {
  return async (req, _res, next) => {
    const address = clientAddress(req, trustProxy);
    req.caller = { kind: 'anonymous', address };
    const header = req.get('x-api-key');
    if (header !== undefined) {
      try {
        const key = await apiKeys.authenticate(header.trim());
        if (key) req.caller = { kind: 'key', address, key };
        else req.invalidApiKey = true;
      } catch (error) {
        req.authenticationError = error;
        // Counted against the key it claims (by hash, on the FREE quota), not against its address:
        // an outage must not use up, or ban, everyone else behind that address.
        req.rateLimitIdentity = `unverified:${hashApiKey(header.trim()).slice(0, 32)}`;
      }
    }
    next();
  };
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

/** After the limiter: refuses the requests whose key was invalid or could not be checked. */
export const rejectUnverifiedKey: RequestHandler = (req, _res, next) => {
  if (req.authenticationError) throw req.authenticationError;
  if (req.invalidApiKey) throw new ApiError('INVALID_API_KEY', 'The X-API-Key header names no valid key');
  next();
};
