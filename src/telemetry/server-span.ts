import { errorMonitor } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { type Attributes, type Context, context, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { RPCType, setRPCMetadata } from '@opentelemetry/core';

/** The methods HTTP's conventions name; any other is `_OTHER`, with the method sent as `http.request.method_original`. */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE']);
/** The query parameters whose values a span never carries: a GET's variables hold what a client typed. */
const REDACTED_PARAMS = ['variables'];

/**
 * `listener` with a server span for each HTTP request the sampler keeps, as OpenTelemetry's HTTP
 * conventions describe it: named after the method (the GraphQL route names it `POST /graphql`
 * once known, operation-span.plugin.ts), of kind server, the child of the caller's `traceparent`,
 * in error for a 5xx or a failed response, ended when the response closes. `admit` is the door:
 * the caller's context when the request is to be recorded, else undefined; a request it leaves
 * out goes to `listener` as it would with tracing off, no span, no context, no listener added. A
 * kept request's listener runs inside the span's context, which the context manager carries
 * across its awaits.
 */
export function tracedListener(listener: RequestListener, tracer: Tracer, admit: (request: IncomingMessage) => Context | undefined): RequestListener {
  return (request, response) => {
    const parent = admit(request);
    if (parent === undefined) return listener(request, response);
    // The attributes are set on the started span, not given to startSpan: the SDK would copy and
    // check them twice for its sampler, which reads none (sampling.ts), before the span checks them.
    const span = tracer.startSpan(request.method || 'GET', { kind: SpanKind.SERVER }, parent);
    span.setAttributes(requestAttributes(request));
    endWithResponse(span, response);
    // The route is named by whoever knows it, as a framework's instrumentation names it.
    const active = setRPCMetadata(trace.setSpan(parent, span), { type: RPCType.HTTP, span });
    try {
      return context.with(active, listener, undefined, request, response);
    } catch (error) {
      failed(span, error as Error);
      throw error;
    }
  };
}

/**
 * Ends `span` when `response` closes, with its status code; a response that fails ends it in error.
 * `on`, not `once`: a response closes once, and `once` would wrap each listener, and take it off
 * again when it runs, for every traced request.
 */
function endWithResponse(span: Span, response: ServerResponse): void {
  response.on('close', () => {
    // Ended already when the response failed first.
    if (!span.isRecording()) return;
    const { statusCode } = response;
    span.setAttribute('http.response.status_code', statusCode);
    // A server's span is in error for a 5xx only: a 4xx is the client's.
    if (!(statusCode >= 100 && statusCode < 500)) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  response.on(errorMonitor, (error: Error) => failed(span, error));
}

/** Ends `span` in error, unless it has ended. */
function failed(span: Span, error: Error): void {
  if (!span.isRecording()) return;
  span.setAttribute('error.type', error.name);
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  span.end();
}

/**
 * A request's attributes by the HTTP conventions (stable since semantic conventions 1.23): what
 * was asked (method, scheme, path, query with its variables redacted), of which server, by which
 * client (the first `Forwarded` or `X-Forwarded-For` entry, else the peer), over which protocol.
 */
export function requestAttributes(request: IncomingMessage): Attributes {
  const { headers, socket } = request;
  const method = request.method ?? 'GET';
  const normalized = KNOWN_METHODS.has(method) ? method : KNOWN_METHODS.has(method.toUpperCase()) ? method.toUpperCase() : '_OTHER';
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const attributes: Attributes = {
    'http.request.method': normalized,
    'url.scheme': 'http',
    'url.path': queryAt === -1 ? url : url.slice(0, queryAt),
    'network.peer.address': socket.remoteAddress,
    'network.peer.port': socket.remotePort,
    'network.protocol.version': request.httpVersion,
    'client.address': clientAddress(headers) ?? socket.remoteAddress,
  };
  if (method !== normalized) attributes['http.request.method_original'] = method;
  if (queryAt !== -1 && queryAt < url.length - 1) attributes['url.query'] = redactedQuery(url.slice(queryAt + 1));
  const host = forwarded(headers, 'host') ?? firstOf(headers['x-forwarded-host']) ?? headers.host;
  if (host) {
    const { address, port } = splitHost(host);
    attributes['server.address'] = address;
    if (port !== undefined) attributes['server.port'] = port;
  }
  const userAgent = headers['user-agent'];
  if (userAgent !== undefined) attributes['user_agent.original'] = userAgent;
  return attributes;
}

function redactedQuery(query: string): string {
  if (!REDACTED_PARAMS.some((name) => query.includes(name))) return query;
  const params = new URLSearchParams(query);
  for (const name of REDACTED_PARAMS) if (params.has(name)) params.set(name, 'REDACTED');
  return params.toString();
}

/** The client a proxy names: `Forwarded`'s first `for=`, else `X-Forwarded-For`'s first address. */
function clientAddress(headers: IncomingHttpHeaders): string | undefined {
  const named = forwarded(headers, 'for') ?? firstOf(headers['x-forwarded-for'])?.split(',')[0].trim();
  return named ? splitHost(named).address : undefined;
}

/** A parameter of the first `Forwarded` element that has it (RFC 7239), its quotes taken off. */
function forwarded(headers: IncomingHttpHeaders, parameter: string): string | undefined {
  const header = headers.forwarded;
  if (!header) return undefined;
  for (const element of header.split(',')) {
    for (const pair of element.split(';')) {
      const equals = pair.indexOf('=');
      if (equals !== -1 && pair.slice(0, equals).trim().toLowerCase() === parameter) return pair.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1');
    }
  }
  return undefined;
}

function firstOf(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

/** `host:port`, `[v6]:port` or a bare address. */
function splitHost(host: string): { address: string; port?: number } {
  const v6 = /^\[([^\]]*)\](?::(\d+))?$/.exec(host);
  if (v6) return { address: v6[1], port: v6[2] === undefined ? undefined : Number(v6[2]) };
  const colon = host.lastIndexOf(':');
  // More than one colon and no brackets: an IPv6 address without a port.
  if (colon === -1 || host.indexOf(':') !== colon) return { address: host };
  const port = Number(host.slice(colon + 1));
  return Number.isInteger(port) && host.length > colon + 1 ? { address: host.slice(0, colon), port } : { address: host };
}
