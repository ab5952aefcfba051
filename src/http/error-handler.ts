import type { ErrorRequestHandler, RequestHandler } from 'express';
import { MAX_BODY_BYTES } from '../common/bounds';
import { isDatabaseUnavailable } from '../sql/pg-errors';
import { ApiError, type ErrorBody, type ErrorCode, INTERNAL_ERROR_BODY, SERVICE_UNAVAILABLE_BODY } from '../errors';
import type { Logger } from '../logger';
import { sendError } from './send-error';

/** Refusals raised by Express and body-parser, by their HTTP status. */
const CLIENT_ERRORS: Partial<Record<number, { code: ErrorCode; message: string }>> = {
  400: { code: 'BAD_REQUEST', message: 'The request is malformed' },
  413: { code: 'PAYLOAD_TOO_LARGE', message: `The request body exceeds ${MAX_BODY_BYTES} bytes` },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body has an unsupported encoding or charset' },
};

const PARSE_FAILED: ErrorBody = { code: 'BAD_REQUEST', message: 'The request body is not valid JSON', status: 400 };

/** The last handler: every failure leaves as the Error object; unexpected ones are logged and masked. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      logger.error({ err: error }, 'error after the response had started');
      res.destroy();
      return;
    }
    if (error instanceof ApiError) return sendError(req, res, error.toBody(), error.headers);
    const { status, type } = error as { status?: unknown; type?: unknown };
    if (type === 'entity.parse.failed') return sendError(req, res, PARSE_FAILED);
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const known = CLIENT_ERRORS[status] ?? CLIENT_ERRORS[400]!;
      return sendError(req, res, { ...known, status: status in CLIENT_ERRORS ? status : 400 });
    }
    if (isDatabaseUnavailable(error)) {
      logger.debug({ err: error }, 'database unavailable');
      return sendError(req, res, SERVICE_UNAVAILABLE_BODY, { 'Retry-After': '5' });
    }
    logger.error({ err: error }, 'unexpected error');
    sendError(req, res, INTERNAL_ERROR_BODY);
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(req, res, { code: 'NOT_FOUND', message: `No resource at ${req.method} ${req.path.slice(0, 200)}`, status: 404 });
};
