import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import '../auth/request';
import type { Logger } from '../logger';
import type { Metrics } from '../ops/metrics';
import { operationOf, surfaceOf } from './operation-name';

declare module 'express-serve-static-core' {
  interface Request {
    /** Echoed as X-Request-Id and written on every log line of this request. */
    requestId?: string;
  }
}

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Gives the request an id (the caller's X-Request-Id when it is sane, else a new UUID), echoes
 * it, and when the response is sent writes one log line and the request metrics.
 */
export function requestLog(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.requestId = requestId;
    res.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const surface = surfaceOf(req);
      const operation = operationOf(req, surface);
      metrics.observeRequest(surface, operation, res.statusCode, seconds);
      const line = {
        requestId,
        method: req.method,
        path: req.originalUrl.split('?', 1)[0].slice(0, 200),
        surface,
        operation,
        status: res.statusCode,
        durationMs: Math.round(seconds * 10_000) / 10,
        keyId: req.caller?.kind === 'key' ? req.caller.key.id : undefined,
      };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger.info(line, 'request');
    });
    next();
  };
}
