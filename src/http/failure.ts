import { MAX_BODY_BYTES } from '../common/bounds';
import { ApiError, type ErrorBody, type ErrorCode, INTERNAL_ERROR_BODY, SERVICE_UNAVAILABLE_BODY } from '../errors';
import type { Logger } from '../logger';
import { isDatabaseUnavailable } from '../sql/pg-errors';

/** Client errors a library raises with an HTTP status, by that status. */
const CLIENT_ERRORS: Partial<Record<number, { code: ErrorCode; message: string }>> = {
  400: { code: 'BAD_REQUEST', message: 'The request is malformed' },
  413: { code: 'PAYLOAD_TOO_LARGE', message: `The request body exceeds ${MAX_BODY_BYTES} bytes` },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body has an unsupported encoding or charset' },
};

export interface Failure {
  body: ErrorBody;
  headers?: Record<string, string>;
}

/**
 * What any failure of a request is answered with: an ApiError as itself, a client error as its
 * status's Error object, a database outage as 503, anything else logged and masked as 500.
 */
export function failureOf(error: unknown, logger: Logger): Failure {
  if (error instanceof ApiError) return { body: error.toBody(), headers: error.headers };
  const { status } = error as { status?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const known = CLIENT_ERRORS[status] ?? CLIENT_ERRORS[400]!;
    return { body: { ...known, status: status in CLIENT_ERRORS ? status : 400 } };
  }
  if (isDatabaseUnavailable(error)) {
    logger.debug({ err: error }, 'database unavailable');
    return { body: SERVICE_UNAVAILABLE_BODY, headers: { 'Retry-After': '5' } };
  }
  logger.error({ err: error }, 'unexpected error');
  return { body: INTERNAL_ERROR_BODY };
}
