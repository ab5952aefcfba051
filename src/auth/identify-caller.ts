import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import type { ApiKeyService } from './api-key.service';
import type { Caller } from './caller';

declare module 'express-serve-static-core' {
  interface Request {
    /** Who sent the request; set before the limiter runs. */
    caller?: Caller;
    /** An X-API-Key was sent but names no valid key: refused after it is counted. */
    invalidApiKey?: boolean;
  }
}

/**
 * Resolves X-API-Key to a caller. An unknown or revoked key is not treated as anonymous: the
 * request is counted against its client address, then refused (API.md §4, §5).
 */
export function identifyCaller(apiKeys: ApiKeyService): RequestHandler {
  return async (req, _res, next) => {
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const header = req.get('x-api-key');
    const key = header === undefined ? null : await apiKeys.authenticate(header.trim());
    req.caller = key ? { kind: 'key', address, key } : { kind: 'anonymous', address };
    req.invalidApiKey = header !== undefined && !key;
    next();
  };
}

export const rejectInvalidApiKey: RequestHandler = (req, _res, next) => {
  if (req.invalidApiKey) throw new ApiError('INVALID_API_KEY', 'The X-API-Key header names no valid key');
  next();
};
