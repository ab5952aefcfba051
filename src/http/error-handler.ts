import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../logger';
import { failureOf } from './failure';
import { writeError } from './respond';

/** Express's last handler (REST and ops): every failure leaves as the Error object. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    if (res.headersSent) {
      logger.error({ err: error }, 'error after the response had started');
      res.destroy();
      return;
    }
    const { body, headers } = failureOf(error, logger);
    writeError(res, body, false, headers);
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  writeError(res, { code: 'NOT_FOUND', message: `No resource at ${req.method} ${req.path.slice(0, 200)}`, status: 404 }, false);
};
