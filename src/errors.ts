import { GraphQLError } from 'graphql';

/** Every error code the gateway sends, with its HTTP status (docs/contract.md §6). */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  BAD_USER_INPUT: 400,
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  PERSISTED_QUERY_NOT_FOUND: 400,
  PERSISTED_QUERY_NOT_SUPPORTED: 400,
  OPERATION_RESOLUTION_FAILURE: 400,
  QUERY_TOO_COMPLEX: 400,
  UNAUTHENTICATED: 401,
  INVALID_API_KEY: 401,
  FORBIDDEN: 403,
  API_KEY_BANNED: 403,
  CLIENT_BANNED: 403,
  PERSISTED_DOCUMENT_REQUIRED: 403,
  NOT_FOUND: 404,
  PERSISTED_DOCUMENT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  INSUFFICIENT_STOCK: 409,
  PET_NOT_AVAILABLE: 409,
  ORDER_ALREADY_COMPLETE: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  CATEGORY_NOT_EMPTY: 409,
  PET_HAS_ORDERS: 409,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  TOO_MANY_SUBSCRIPTIONS: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The Error object of every REST body, and the `extensions` of every GraphQL error. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code);
}

/**
 * The one error class the gateway raises on purpose. Thrown from a resolver it becomes a field
 * error (HTTP 200, status in `extensions`); thrown before execution it sets the HTTP status.
 */
export class ApiError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;
  /** Response headers that belong with this refusal, such as Allow; Retry-After comes of `retryAfterSeconds`. */
  readonly headers: Record<string, string>;
  /** Whole seconds the client should wait before sending again: a refusal's Retry-After (refusals.ts). */
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}, retryAfterSeconds?: number) {
    const status = ERROR_STATUS[code];
    // An answer to the client, not a fault to trace: capturing a stack was a tenth of the time a
    // crowd's refusals cost the instance.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, { extensions: { code, status } });
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
    this.headers = headers;
    if (retryAfterSeconds !== undefined) this.retryAfterSeconds = retryAfterSeconds;
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }

  /** Every header of the answer: its own, and Retry-After when it has one. */
  responseHeaders(): Record<string, string> {
    return this.retryAfterSeconds === undefined ? this.headers : { ...this.headers, 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/**
 * A refusal raised while fields execute that refuses the whole request, as one before execution
 * would: sent with its own status and headers, not as a field error in a 200 (a client over its
 * database allowance, docs/contract.md §5).
 */
export class RequestRefusal extends ApiError {}

export const badInput = (message: string) => new ApiError('BAD_USER_INPUT', message);
export const notFound = (what: string) => new ApiError('NOT_FOUND', `${what} not found`);
