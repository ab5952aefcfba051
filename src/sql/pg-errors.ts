import { QueryFailedError } from 'typeorm';

/** The SQLSTATE of a failed statement, when PostgreSQL refused it. */
export function sqlState(error: unknown): string | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const code = (error.driverError as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** 23503: a referenced row is missing; 23001: ON DELETE RESTRICT kept a referenced row. */
export const isForeignKeyViolation = (error: unknown) => ['23503', '23001'].includes(sqlState(error) ?? '');

/** 23505: a unique index already holds the value. */
export const isUniqueViolation = (error: unknown) => sqlState(error) === '23505';

/**
 * No connection came in a whole statement timeout and no statement ahead finished meanwhile: the
 * database is not answering. Coded as PostgreSQL codes a connection that could not be made
 * (SQLSTATE 08001), so that it is handled as the driver's own connection failures are.
 */
export class DatabaseNotAnswering extends Error {
  readonly code = '08001';

  constructor(waitedMs: number) {
    super(`no connection came in ${waitedMs} ms and no statement ahead finished`);
    this.name = 'DatabaseNotAnswering';
  }
}

/** Socket-level failures: PostgreSQL is down, unreachable, or the pool could not connect in time. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);
const CONNECTION_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|connection timeout|Connection is not established|cannot use a pool after calling end|Client has encountered a connection error|Query read timeout/i;

/** The errors a failure wraps: TypeORM's driverError, graphql-js's originalError, a cause. */
const WRAPPED = ['driverError', 'originalError', 'thrownValue', 'cause'] as const;

/**
 * True when a failure means the database cannot be reached right now (connection refused, dropped,
 * timed out, shutting down, statement cancelled by its timeout): the request gets 503, not 500.
 * Duck-typed, since socket errors are not always `Error` instances by the time they arrive here.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (CONNECTION_ERRORS.has(code) || /^(08|57P0|57014)/.test(code))) return true;
  if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
  return WRAPPED.some((property) => isDatabaseUnavailable((error as Record<string, unknown>)[property], depth + 1));
}
