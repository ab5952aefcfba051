import { isDatabaseUnavailable } from '../sql/pg-errors';

/**
 * The gateway could not open DATABASE_URL's database. Its message is one line an operator can act
 * on (what is wrong, and how to fix it); the driver's error, with its stack, is the `cause`.
 */
export class DatabaseConnectError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'DatabaseConnectError';
  }
}

/** SQLSTATE 3D000: the server is up, the database named in the URL is not there. */
const INVALID_CATALOG_NAME = '3D000';
/** Class 28: the server refused the user or its password. */
const INVALID_AUTHORIZATION = /^28/;

/**
 * One line for a failure to connect to `url`, or undefined for anything else (a bug keeps its
 * stack). The password never appears: only host, port, user and database are named.
 */
export function describeConnectFailure(error: unknown, url: string, variable = 'DATABASE_URL'): string | undefined {
  const { host, port, user, database } = partsOf(url);
  const where = `${host}:${port}`;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === INVALID_CATALOG_NAME) {
    return (
      `Database error: database "${database}" does not exist on ${where}. ` +
      `Create it with \`createdb -h ${host} -p ${port} -U ${user} ${database}\` ` +
      `(or CREATE DATABASE in psql), or set ${variable} to one that exists.`
    );
  }
  if (typeof code === 'string' && INVALID_AUTHORIZATION.test(code)) {
    return `Database error: PostgreSQL on ${where} refused user "${user}" (${String(message)}); check the credentials in ${variable}.`;
  }
  if (isDatabaseUnavailable(error)) {
    const reason = typeof code === 'string' ? code : String(message);
    return `Database error: PostgreSQL on ${where} cannot be reached (${reason}); is it running, and is ${variable} right?`;
  }
  return undefined;
}

/** Where `url` points, without its password; PostgreSQL's defaults where it says nothing. */
export function partsOf(url: string): { host: string; port: string; user: string; database: string } {
  const parsed = new URL(url);
  return {
    host: parsed.hostname || 'localhost',
    port: parsed.port || '5432',
    user: decodeURIComponent(parsed.username) || 'postgres',
    database: decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || 'postgres',
  };
}
