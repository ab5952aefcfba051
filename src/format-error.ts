import { unwrapResolverError } from '@apollo/server/errors';
import type { ValidationError } from 'class-validator';
import { type ExecutionResult, type FormattedExecutionResult, GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ArgumentValidationError } from 'type-graphql';
import { MAX_BODY_BYTES } from './common/bounds';
import { ApiError, type ErrorBody, type ErrorCode, badInput, isErrorCode } from './errors';
import type { Logger } from './logger';
import { clientErrorOfStatus, databaseUnavailable } from './refusals';
import { isDatabaseUnavailable } from './sql/pg-errors';

/** Apollo refuses some requests with BAD_REQUEST and a more telling HTTP status. */
const CODE_OF_HTTP_STATUS: Partial<Record<number, ErrorCode>> = {
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/** docs/contract.md §8: never a bare "Validation aborted." */
const TOO_COMPLEX_TO_VALIDATE = 'The document repeats selections of one field too often to validate; select each field once';

const INTERNAL_ERROR = new ApiError('INTERNAL_SERVER_ERROR', 'Internal server error');

/** What a client is told of a failure: the Error object, and the headers and Retry-After that go with it. */
export interface Failure {
  body: ErrorBody;
  headers: Record<string, string>;
  retryAfterSeconds?: number;
}

/**
 * The one formatter of every error the gateway sends, on every transport (HTTP GraphQL, REST,
 * SSE, WebSocket; docs/contract.md §6): an ApiError as itself (with its headers and Retry-After), a
 * class-validator refusal as BAD_USER_INPUT, a database outage as 503, an error Apollo or a library
 * raised with a code or an HTTP status as that code, anything else logged and masked as 500.
 * `formatted` is Apollo's rendering of a GraphQL error, when Apollo made one.
 */
export function failureOf(error: unknown, logger: Logger, formatted?: GraphQLFormattedError): Failure {
  const known = apiErrorOf(error, formatted, logger);
  if (known) return refusalFailure(known);
  logger.error({ err: unwrapResolverError(error) }, formatted ? 'unexpected GraphQL error' : 'unexpected error');
  return { body: INTERNAL_ERROR.toBody(), headers: {} };
}

/** A refusal the gateway made on purpose: itself, with its headers and Retry-After. */
export function refusalFailure(error: ApiError): Failure {
  const { retryAfterSeconds } = error;
  return { body: error.toBody(), headers: error.responseHeaders(), ...(retryAfterSeconds !== undefined && { retryAfterSeconds }) };
}

/**
 * A GraphQL error as the contract has it: its message, locations and path, and
 * `extensions: {code, status}` and nothing more. Where no HTTP header can carry a refusal's
 * Retry-After (a subscription's messages and events), `extensions.retryAfter` does.
 */
export function formatGraphQLError(error: unknown, logger: Logger, formatted = renderingOf(error), retryAfter = true): GraphQLFormattedError {
  const failure = failureOf(error, logger, formatted);
  const { code, message, status } = failure.body;
  return {
    message,
    ...(formatted?.locations && { locations: formatted.locations }),
    ...(formatted?.path && { path: formatted.path }),
    extensions: { code, status, ...(retryAfter && failure.retryAfterSeconds !== undefined && { retryAfter: failure.retryAfterSeconds }) },
  };
}

/**
 * Apollo's `formatError` option: its rendering and the error it came of, through the one
 * formatter. Retry-After goes in a header there (http-status.plugin.ts).
 */
export function createErrorFormatter(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => formatGraphQLError(error, logger, formatted, false);
}

/** An execution result (a subscription's event, a refusal sent as a result) with every error formatted. */
export function formatResult(result: ExecutionResult, logger: Logger): FormattedExecutionResult {
  if (!result.errors?.length) return result as FormattedExecutionResult;
  return { ...result, errors: result.errors.map((error) => formatGraphQLError(error, logger)) };
}

/** The body of a failure's answer: the Error object itself (REST, ops), or a GraphQL response of that one error. */
export function failureBody(failure: Failure, graphql: boolean): ErrorBody | { errors: GraphQLFormattedError[] } {
  const { code, message, status } = failure.body;
  return graphql ? { errors: [{ message, extensions: { code, status } }] } : { code, message, status };
}

function renderingOf(error: unknown): GraphQLFormattedError | undefined {
  return error instanceof GraphQLError ? error.toJSON() : undefined;
}

/** The ApiError a failure stands for, or undefined when it is unexpected (to be logged and masked). */
function apiErrorOf(error: unknown, formatted: GraphQLFormattedError | undefined, logger: Logger): ApiError | undefined {
  const original = unwrapResolverError(error);
  if (original instanceof ApiError) return original;
  // A scalar's refusal, re-raised by graphql-js validation and wrapped by Apollo.
  if (original instanceof GraphQLError && original.originalError instanceof ApiError) return original.originalError;
  if (original instanceof ArgumentValidationError) return badInput(describeViolations(original.extensions.validationErrors as ValidationError[]));
  if (isDatabaseUnavailable(original)) {
    logger.debug({ err: original }, 'database unavailable');
    return databaseUnavailable();
  }
  if (formatted) return codedGraphQLError(formatted, httpStatusOf(error));
  // A library's client error (a body it could not read, say) carries its HTTP status.
  const { status } = (error ?? {}) as { status?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500) return clientErrorOfStatus(status, MAX_BODY_BYTES);
  return undefined;
}

/** An error Apollo or graphql-js raised, by the code Apollo gave it. */
function codedGraphQLError(formatted: GraphQLFormattedError, httpStatus: number | undefined): ApiError | undefined {
  let code = formatted.extensions?.code;
  // graphql-js stops validating past a fixed budget of work; say which limit refused the document.
  if (code === 'GRAPHQL_VALIDATION_FAILED' && formatted.message === 'Validation aborted.') return new ApiError('QUERY_TOO_COMPLEX', TOO_COMPLEX_TO_VALIDATE);
  // Apollo refuses some malformed requests (a persisted query whose hash does not match, say)
  // with an HTTP status but no code of its own.
  if (code === 'BAD_REQUEST' || (code === 'INTERNAL_SERVER_ERROR' && httpStatus !== undefined && httpStatus < 500)) {
    code = CODE_OF_HTTP_STATUS[httpStatus ?? 400] ?? 'BAD_REQUEST';
  }
  if (!isErrorCode(code) || code === 'INTERNAL_SERVER_ERROR') return undefined;
  return new ApiError(code, formatted.message);
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
