import type { RequestListener } from 'node:http';
import type { ApolloServerPlugin } from '@apollo/server';
import type { Trace } from '../common/trace';

/**
 * Tracing (docs/contract.md §10), switched by the standard OTEL_* variables. This module loads no
 * OpenTelemetry code: the SDK (sdk.ts) is required only when tracing is asked for, so with it off
 * the request path runs what it ran before, and the hooks below cost one check.
 */

/** What a running tracer gives the rest of the gateway (sdk.ts). */
export interface Tracing {
  /** `listener` with a server span for each request the sampler keeps, run in its context. */
  traced(listener: RequestListener): RequestListener;
  /** The GraphQL operation span of each HTTP request. */
  plugin(): ApolloServerPlugin;
  /** The trace of the request whose listener is running, when its sampler kept it. */
  activeTrace(): Trace | undefined;
  /** Runs `subscribe` inside a span of its own, the child of `parent` or, for 'root', a trace's root. */
  traceSubscribe<T>(operationName: string | null | undefined, parent: Trace | 'root', subscribe: (trace: Trace | undefined) => Promise<T>): Promise<T>;
  /** The fields a log line written inside a span carries. */
  logFields(): Record<string, string>;
  /** Sends the spans still buffered. */
  shutdown(): Promise<void>;
}

let tracing: Tracing | undefined;

/**
 * Whether the environment asks for traces: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or an exporter named in OTEL_TRACES_EXPORTER, unless
 * OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is none.
 */
export function tracingRequested(env: Record<string, string | undefined>): boolean {
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() ?? '';
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || exporter === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || exporter);
}

/**
 * Starts tracing when the environment asks for it. It must run before pg and ioredis are first
 * required, which the instrumentations patch as they load: see start.ts.
 */
export function startTracing(env: Record<string, string | undefined> = process.env): void {
  if (tracing || !tracingRequested(env)) return;
  // Required, not imported: with tracing off, none of the SDK is loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startSdk } = require('./sdk') as typeof import('./sdk');
  tracing = startSdk(env);
}

/** The HTTP server's request listener: with a server span per kept request while tracing, else `listener` itself. */
export function tracedRequests(listener: RequestListener): RequestListener {
  return tracing ? tracing.traced(listener) : listener;
}

/** The GraphQL operation span's plugin while tracing, else none. */
export function tracingPlugins(): ApolloServerPlugin[] {
  return tracing ? [tracing.plugin()] : [];
}

/**
 * The trace of the HTTP request now arriving, when its sampler kept it: called in the request
 * listener's first, synchronous step, inside the HTTP span's context. None without tracing.
 */
export function currentTrace(): Trace | undefined {
  return tracing?.activeTrace();
}

/**
 * One subscription operation in a span of its own, given to `subscribe` as its trace: its checks,
 * its Redis calls and its SQL statements are the span's children. `parent` 'root' for a subscribe
 * over WebSocket, the root of its trace if the sampler keeps it; else the trace of the stream's
 * request (SSE), none when that request is not traced. Without tracing, `subscribe(undefined)`.
 */
export function traceOperation<T>(operationName: string | null | undefined, parent: Trace | 'root' | undefined, subscribe: (trace: Trace | undefined) => Promise<T>): Promise<T> {
  return tracing && parent ? tracing.traceSubscribe(operationName, parent, subscribe) : subscribe(undefined);
}

/** A pino mixin adding the trace and span ids to lines written inside a span; none without tracing. */
export function traceLogMixin(): (() => Record<string, string>) | undefined {
  const running = tracing;
  return running ? () => running.logFields() : undefined;
}

/** Sends the spans still buffered, waiting `withinMs` at most: an unreachable collector never holds up an exit. */
export async function stopTracing(withinMs = 2_000): Promise<void> {
  if (!tracing) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    tracing.shutdown().catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs))),
  ]);
  clearTimeout(timer);
}
