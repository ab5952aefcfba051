import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Scope } from '../common/scope';
import type { Logger } from '../logger';
import type { Metrics, Surface } from '../ops/metrics';

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** What the log line and the request metrics say of one request; the steps that know fill it in. */
export interface RequestState {
  readonly requestId: string;
  /** The API key's id, once the caller is known. */
  keyId?: string;
  /** The surface and operation of the metrics: `none` until a surface takes the request. */
  surface: Surface;
  operation: string;
}

/**
 * The first step of every request: gives it an id (the caller's X-Request-Id when it is sane,
 * else a new UUID), echoes it, and when the request's scope ends writes one log line and the
 * request metrics: with its status once sent, or as `aborted` when the client went away first.
 */
export function requestLog(logger: Logger, metrics: Metrics) {
  return (req: IncomingMessage, res: ServerResponse, path: string, scope: Scope): RequestState => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const state: RequestState = { requestId, surface: 'none', operation: 'none' };
    res.setHeader('X-Request-Id', state.requestId);
    const started = process.hrtime.bigint();
    // Registered first, so run last: once everything the request took is given back.
    scope.defer(() => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const { surface, operation } = state;
      const aborted = !res.writableFinished;
      metrics.observeRequest(surface, operation, aborted ? 'aborted' : res.statusCode, seconds);
      // A 503 is an answer the gateway chose (shed under load, the database away), logged as a
      // warning; any other 5xx is a failure, an error.
      const unavailable = !aborted && res.statusCode === 503;
      const failed = !aborted && res.statusCode >= 500 && !unavailable;
      // At LOG_LEVEL=warn (as deployed under load) the line of an answered request is not even built.
      if (!logger.isLevelEnabled(failed ? 'error' : unavailable ? 'warn' : 'info')) return;
      const line = {
        requestId: state.requestId,
        method: req.method,
        path: path.slice(0, 200),
        surface,
        operation,
        // A stream the client closed had sent its status; a request cut off before its answer had none.
        status: aborted && !res.headersSent ? undefined : res.statusCode,
        ...(aborted && { outcome: 'aborted' }),
        durationMs: Math.round(seconds * 10_000) / 10,
        keyId: state.keyId,
        // Written after the request's trace has ended, so given its ids rather than found in context.
        ...scope.trace?.logFields(),
      };
      if (aborted) logger.info(line, 'request aborted');
      else if (failed) logger.error(line, 'request failed');
      else if (unavailable) logger.warn(line, 'request unavailable');
      else logger.info(line, 'request');
    });
    return state;
  };
}
