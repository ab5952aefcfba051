import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ValidationError } from 'class-validator';
import { ArgumentValidationError } from 'type-graphql';
import { isDatabaseUnavailable } from '../sql/pg-errors';
import {
  ApiError,
  ERROR_STATUS,
  type ErrorBody,
  type ErrorCode,
  INTERNAL_ERROR_BODY,
  SERVICE_UNAVAILABLE_BODY,
  badInput,
  isErrorCode,
} from '../errors';
import type { Logger } from '../logger';

/** Apollo refuses some requests with BAD_REQUEST and a more telling HTTP status. */
const CODE_OF_HTTP_STATUS: Partial<Record<number, ErrorCode>> = {
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/** docs/contract.md §8: never a bare "Validation aborted." */
export const TOO_COMPLEX_TO_VALIDATE: ErrorBody = Object.freeze({
  code: 'QUERY_TOO_COMPLEX',
  message: 'The document repeats selections of one field too often to validate; select each field once',
  status: 400,
});

/**
 * Gives every GraphQL error the contract's `extensions: {code, status}` and nothing more.
 * Errors the gateway did not raise on purpose are logged and masked.
 */
export function createErrorFormatter(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const body = describeError(formatted, error, logger);
    return {
      message: body.message,
      ...(formatted.locations && { locations: formatted.locations }),
      ...(formatted.path && { path: formatted.path }),
      extensions: { code: body.code, status: body.status },
    };
  };
}

function describeError(formatted: GraphQLFormattedError, error: unknown, logger: Logger): ErrorBody {
  const original = unwrapResolverError(error);
  if (original instanceof ApiError) return original.toBody();
  // A scalar's refusal, re-raised by graphql-js validation and wrapped by Apollo.
  if (original instanceof GraphQLError && original.originalError instanceof ApiError) {
    return original.originalError.toBody();
  }
  if (original instanceof ArgumentValidationError) {
    return badInput(describeViolations(original.extensions.validationErrors as ValidationError[])).toBody();
  }
  if (isDatabaseUnavailable(original)) {
    logger.debug({ err: original }, 'database unavailable');
    return SERVICE_UNAVAILABLE_BODY;
  }
  let code = formatted.extensions?.code;
  // graphql-js stops validating past a fixed budget of work; say which limit refused the document.
  if (code === 'GRAPHQL_VALIDATION_FAILED' && formatted.message === 'Validation aborted.') return TOO_COMPLEX_TO_VALIDATE;
  const httpStatus = httpStatusOf(error);
  // Apollo refuses some malformed requests (a persisted query whose hash does not match, say)
  // with an HTTP status but no code of its own.
  if (code === 'BAD_REQUEST' || (code === 'INTERNAL_SERVER_ERROR' && httpStatus !== undefined && httpStatus < 500)) {
    code = CODE_OF_HTTP_STATUS[httpStatus ?? 400] ?? 'BAD_REQUEST';
  }
  if (isErrorCode(code) && code !== 'INTERNAL_SERVER_ERROR') {
    return { code, message: formatted.message, status: ERROR_STATUS[code] };
  }
  logger.error({ err: original }, 'unexpected GraphQL error');
  return INTERNAL_ERROR_BODY;
}

function httpStatusOf(error: unknown): number | undefined {
  const http = error instanceof GraphQLError ? (error.extensions?.http as { status?: unknown } | undefined) : undefined;
  return typeof http?.status === 'number' ? http.status : undefined;
}

/** "name must be 1 to 100 characters after trimming; first must be at most 100" */
export function describeViolations(errors: ValidationError[], parent = ''): string {
  return errors
    .flatMap((error) => {
      const own = Object.values(error.constraints ?? {});
      const nested = error.children?.length ? [describeViolations(error.children, `${parent}${error.property}.`)] : [];
      return [...own.map((message) => (parent ? `${parent}${message}` : message)), ...nested];
    })
    .join('; ');
}
