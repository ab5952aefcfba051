import type { ClassBound } from './common/fair-turns';
import { ApiError, type ErrorCode, RequestRefusal } from './errors';

/**
 * Every refusal the gateway answers a request, socket or stream with (docs/contract.md §5, §6, §9):
 * its code, status, message and Retry-After, made here and nowhere else. A refusal's Retry-After
 * travels as `ApiError.retryAfterSeconds`, which the one formatter (format-error.ts) turns into the
 * header (HTTP, SSE) or `extensions.retryAfter` (a WebSocket's `error` message).
 */

/** Who is refused: a key, or an anonymous client address. */
export type RefusedCaller = { kind: 'key' } | { kind: 'anonymous' };

/** The bound a refused socket or stream would have passed (limits/socket-admission.ts). */
export type SocketBound = 'pending_per_address' | 'open_per_identity' | 'instance_ceiling';

/** A socket's or a stream's seat, per bound: a pending WebSocket settles within its 3 s init timeout. */
const SOCKET_RETRY_AFTER_SECONDS: Record<'websocket' | 'stream', Record<SocketBound, number>> = {
  websocket: { pending_per_address: 3, open_per_identity: 5, instance_ceiling: 5 },
  stream: { pending_per_address: 5, open_per_identity: 5, instance_ceiling: 5 },
};

/** How long a client waits for a database that cannot be reached. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Over a minute or day window: until that window frees. */
export function overWindow(limit: number, window: string, retryAfterSeconds: number): ApiError {
  return rateLimited(`Rate limit exceeded: ${limit} requests per ${window}; retry in ${retryAfterSeconds} s`, retryAfterSeconds);
}

/**
 * The instance holds as many requests in flight as it keeps for callers of this priority: the
 * rest of its capacity is kept for more important ones (503: the instance is overloaded, not the
 * client over a limit).
 */
export function instanceBusy(inFlight: number): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', `This instance is busy: it has ${inFlight} requests in flight, and keeps the rest of its capacity for clients of higher plans; retry in 1 s`, {}, 1);
}

/** The instance's event loop runs late: it keeps what it has for clients of higher plans. */
export function instanceLagging(delayMs: number): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', `This instance is busy: its work runs ${Math.round(delayMs)} ms late, and it keeps what it has for clients of higher plans; retry in 1 s`, {}, 1);
}

/** The identity's in-flight slots stayed full for the whole wait: retry in a second, nothing counted. */
export function inFlightFull(max: number): ApiError {
  return rateLimited(`Too many requests in flight: at most ${max} at once, and none finished in time; retry in 1 s`, 1);
}

/** The §6 code of a banned caller. */
export function bannedCode(caller: RefusedCaller): 'API_KEY_BANNED' | 'CLIENT_BANNED' {
  return caller.kind === 'key' ? 'API_KEY_BANNED' : 'CLIENT_BANNED';
}

/** A banned caller, until `untilMs` (epoch ms): the limiter's Retry-After, or the seconds left from now. */
export function banned(caller: RefusedCaller, untilMs: number, retryAfterSeconds?: number): ApiError {
  const who = caller.kind === 'key' ? 'This key' : 'This client';
  const retryAfter = retryAfterSeconds ?? Math.max(1, Math.ceil((untilMs - Date.now()) / 1000));
  return new ApiError(bannedCode(caller), `${who} kept sending while rate limited; it is banned until ${new Date(untilMs).toISOString()}`, {}, retryAfter);
}

/** A key that names nothing, or was revoked (a socket's or stream's key, checked again). */
export function invalidApiKey(): ApiError {
  return new ApiError('INVALID_API_KEY', 'The X-API-Key header names no valid key');
}

/**
 * What an open socket or stream is closed with when a re-check finds its key revoked or its
 * identity banned: the code its close carries as reason, as the refusal.
 */
export function closedFor(code: string): ApiError {
  if (code === 'API_KEY_BANNED') return new ApiError(code, 'This key is banned');
  if (code === 'CLIENT_BANNED') return new ApiError(code, 'This client is banned');
  return invalidApiKey();
}

/** A socket (WebSocket) or stream (SSE) over one of the connection bounds. */
export function socketBound(bound: SocketBound, transport: 'websocket' | 'stream'): ApiError {
  const retryAfter = SOCKET_RETRY_AFTER_SECONDS[transport][bound];
  const what = transport === 'websocket' ? 'WebSockets' : 'streams and WebSockets';
  const message = {
    pending_per_address:
      transport === 'websocket'
        ? `Too many WebSockets from this address have not sent connection_init; retry in ${retryAfter} s`
        : `Too many streams from this address are being opened at once; retry in ${retryAfter} s`,
    open_per_identity: `Too many ${what} are open with this key; close one first`,
    instance_ceiling: `This instance holds as many ${what} as it may; retry in ${retryAfter} s`,
  }[bound];
  return rateLimited(message, retryAfter);
}

/** More subscriptions than the caller's plan allows at once. */
export function tooManySubscriptions(cap: number): ApiError {
  return new ApiError('TOO_MANY_SUBSCRIPTIONS', `At most ${cap} subscriptions may be open at once; complete one first`);
}

/** The identity's own statements, or its database time, refuse the whole request (docs/contract.md §5). */
export function databaseBusy(message: string, retryAfterSeconds: number): RequestRefusal {
  return new RequestRefusal('RATE_LIMITED', message, {}, Math.max(1, retryAfterSeconds));
}

/** What a request's statements could expect of the database pool when it was refused (db/statement-budget.ts). */
export interface PoolOutlook {
  /** Milliseconds until its next statement would start. */
  waitMs: number;
  /** Its own statements waiting ahead of it. */
  ahead: number;
  /** Connections at once its fair share gives it (possibly a fraction), of `capacity`. */
  share: number;
  capacity: number;
  /** Other clients holding or waiting for connections. */
  others: number;
  /** Set when its class's bound, not its weight alone, bounded its share. */
  classBound?: ClassBound;
}

/** Whom a class bound holds, and when it holds, by why it holds. */
const CLASS_BOUND_WHO = { unpaid: 'FREE keys and anonymous clients', anonymous: 'Anonymous clients' } as const;
const CLASS_BOUND_WHEN: Record<ClassBound['because'], string> = {
  'paying waits': 'while a paying client waits',
  'unpaid max': 'at any time, as many as their database time a second keeps busy',
  reserve: 'at any time, the rest being kept for paying plans',
  'others wait': 'while keyed clients wait',
};

/** Who a class bound holds, and how many connections it leaves them, for a refusal's message. */
function classLimit(bound: ClassBound, capacity: number): string {
  return `${CLASS_BOUND_WHO[bound.tier]} together hold at most ${bound.limit} of the database's ${capacity} connections ${CLASS_BOUND_WHEN[bound.because]}`;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Its own statements waiting would not start soon at the client's share of the database pool:
 * refused at once (429), before it queues, naming its share (docs/contract.md §5, "Fair share of
 * the database").
 */
export function overDatabaseShare(outlook: PoolOutlook): RequestRefusal {
  const retry = seconds(outlook.waitMs);
  const wait = `its ${outlook.ahead} statements waiting would take about ${Math.round(outlook.waitMs)} ms to start`;
  const share = `(${outlook.share.toFixed(2)} of ${outlook.capacity} connections, with ${outlook.others} other clients waiting)`;
  const message = outlook.classBound
    ? `${classLimit(outlook.classBound, outlook.capacity)}; at this client's share of them ${share}, ${wait}; retry in ${retry} s`
    : `At this client's share of the database ${share}, ${wait}; send fewer requests at once, retry in ${retry} s`;
  return new RequestRefusal('RATE_LIMITED', message, {}, retry);
}

/** The client's own statements held every connection it may hold at once for a whole wait (429). */
export function ownStatementsHeld(waitMs: number, max: number): RequestRefusal {
  return new RequestRefusal('RATE_LIMITED', `This client's own earlier statements held all ${max} of its database connections at once for ${waitMs} ms; send fewer requests at once`, {}, 1);
}

/**
 * The instance's database pool is too busy for every client of this one's priority: its first
 * statement, with none of its own ahead, would not start soon, or its wait ran out while others'
 * statements were served (503, docs/contract.md §5). `classBound`: its class held all the
 * connections it may, which is then the cause named.
 */
export function databaseSaturated(waitMs: number, waited: boolean, capacity?: number, classBound?: ClassBound): RequestRefusal {
  const retry = seconds(waitMs);
  const what = waited ? `waited ${waitMs} ms for a connection` : `would wait about ${Math.round(waitMs)} ms for a connection`;
  const busy =
    classBound && capacity !== undefined
      ? `${classLimit(classBound, capacity)}, and all of those are busy`
      : `This instance's database connections are all busy with clients of this priority or higher`;
  return new RequestRefusal('SERVICE_UNAVAILABLE', `${busy}: a statement ${what}; retry in ${retry} s`, {}, retry);
}

/**
 * The database time FREE keys and anonymous clients may use together on the instance (or
 * anonymous clients' part of it) is spent for now (db/class-database-time.ts): the database is
 * busy for this priority, not the client at fault.
 */
export function unpaidDatabaseTimeSpent(bucket: 'unpaid' | 'anonymous', msPerSecond: number, waitMs: number): RequestRefusal {
  const retry = seconds(waitMs);
  const who = bucket === 'anonymous' ? 'Anonymous clients' : 'FREE keys and anonymous clients';
  return new RequestRefusal(
    'SERVICE_UNAVAILABLE',
    `${who} together use at most ${msPerSecond} ms of database time a second on this instance, and that is spent for now; retry in ${retry} s`,
    {},
    retry,
  );
}

/** The database cannot be reached; it recovers by itself. */
export function databaseUnavailable(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly', {}, DATABASE_RETRY_AFTER_SECONDS);
}

/** A path the gateway serves nothing at. */
export function noResource(method: string, path: string): ApiError {
  return new ApiError('NOT_FOUND', `No resource at ${method} ${path.slice(0, 200)}`);
}

/** A method the path does not serve; `allowed` becomes the Allow header. */
export function methodNotAllowed(method: string | undefined, path: string, allowed: readonly string[], message?: string): ApiError {
  return new ApiError('METHOD_NOT_ALLOWED', message ?? `${method} is not supported on ${path}; use ${allowed.join(' or ')}`, { Allow: allowed.join(', ') });
}

/** An Accept header that allows none of the types the path answers with. */
export function notAcceptable(types: readonly string[]): ApiError {
  return new ApiError('NOT_ACCEPTABLE', `Accept must allow ${types.join(' or ')}`);
}

/** A body of another type than JSON; `path` is what takes JSON. */
export function jsonBodyRequired(path: string): ApiError {
  return new ApiError('UNSUPPORTED_MEDIA_TYPE', `POST ${path} takes a JSON body: Content-Type: application/json`);
}

/** A JSON body in a charset other than UTF-8, or with a Content-Type that does not parse. */
export function unsupportedCharset(): ApiError {
  return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body has an unsupported encoding or charset');
}

/** A request HTTP does not allow, answered and then closed (the connection cannot be trusted further). */
export function malformedRequest(message: string): ApiError {
  return new ApiError('BAD_REQUEST', message, { Connection: 'close' });
}

/** A header that does not parse, or says one thing twice: the request is malformed, the connection fine. */
export function malformedHeader(name: string, problem: string, value: string): ApiError {
  return new ApiError('BAD_REQUEST', `The ${name} header ${problem}: ${JSON.stringify(value.slice(0, 80))}`);
}

/**
 * A body past the limit. The connection is closed after it: whatever else the client sends is not
 * read (Node destroys the socket once the answer is flushed), so an endless body costs nothing more.
 */
export function payloadTooLarge(limit: number): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `The request body exceeds ${limit} bytes`, { Connection: 'close' });
}

/** Refusals a library makes with an HTTP status alone, by that status: a client error with the code of its status. */
export function clientErrorOfStatus(status: number, maxBodyBytes: number): ApiError {
  if (status === 413) return payloadTooLarge(maxBodyBytes);
  const known: Partial<Record<number, [ErrorCode, string]>> = {
    415: ['UNSUPPORTED_MEDIA_TYPE', 'The request body has an unsupported encoding or charset'],
  };
  const [code, message] = known[status] ?? ['BAD_REQUEST', 'The request is malformed'];
  return new ApiError(code, message);
}

function rateLimited(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError('RATE_LIMITED', message, {}, retryAfterSeconds);
}
