import type { IncomingMessage, RequestListener } from 'node:http';
import { type Context, context, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { type ExecutionArgs, getOperationAST } from 'graphql';
import type { Trace } from '../common/trace';
import type { Tracing } from '.';
import { operationSpanPlugin } from './operation-span.plugin';
import { activeTrace, RequestTrace } from './request-trace';
import { admittedSampler, requestDoor, sampledAtTheDoor, samplerFromEnv } from './sampling';
import { tracedListener } from './server-span';

/** The service name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES gives one. */
const SERVICE_NAME = 'petstore-gateway';
/** Probes and scrapes, every few seconds from every instance: no trace would tell anything. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The OpenTelemetry SDK for Node, configured by the OTEL_* variables it reads itself (exporter,
 * endpoint, protocol, headers, sampler, propagators, batching), with spans for incoming HTTP
 * requests, pg statements and ioredis calls. Traces only: the gateway's metrics are Prometheus's
 * and its logs are stdout's. Statements and Redis calls outside any request (the change listener,
 * the key re-checks) start no trace of their own.
 *
 * The sampler (OTEL_TRACES_SAMPLER) is asked at the door, before any span or attribute exists: a
 * request it keeps gets its server span from server-span.ts, made by the gateway's own request
 * listener (Tracing.traced); one it leaves out runs as with tracing off, and its statements and
 * Redis calls, having no parent, make no span either. The SDK's own sampler then records every
 * root that came through the door. No HTTP instrumentation: it built a request's attributes, and
 * wrapped its response, whether the span was recorded or not, and the gateway serves no other
 * HTTP library's requests and sends none (the exporter's own requests must make no span).
 *
 * The context is the SDK's own context manager's (AsyncLocalStorage): a kept request's listener
 * runs in its span's context, and pg's and ioredis's instrumentations find it across the
 * request's awaits. Work the gateway runs for a request outside its listener's chain (a
 * subscription's statements) is entered in the request's trace explicitly (request-trace.ts).
 */
export function startSdk(env: Record<string, string | undefined>): Tracing {
  const named = Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sampler = samplerFromEnv(env);
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName: SERVICE_NAME }),
    sampler: admittedSampler(),
    instrumentations: [
      // Statements with their text, never their bound values. A pool checkout is no span: the
      // pool's waiting clients are a metric already (petstore_db_pool_connections).
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      // The command alone: the limiter's keys name a client (an address, a key id).
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  const tracer = trace.getTracer(SERVICE_NAME);
  // Once the SDK has installed the propagators the door reads.
  const door = requestDoor(sampler);
  const admit = (request: IncomingMessage) => (UNTRACED_PATHS.has(pathOf(request)) ? undefined : door(request.headers));
  return {
    traced: (listener: RequestListener) => tracedListener(listener, tracer, admit),
    plugin: () => operationSpanPlugin(tracer),
    activeTrace,
    traceSubscribe: (operationName, parent, subscribe) => {
      // Over SSE, the child of its stream's request. Over WebSocket, a root asked at the door.
      if (parent === 'root') {
        return sampledAtTheDoor(sampler, ROOT_CONTEXT, 'subscription', SpanKind.SERVER) ? traceSubscribe(tracer, operationName, ROOT_CONTEXT, subscribe) : subscribe(undefined);
      }
      return parent instanceof RequestTrace ? traceSubscribe(tracer, operationName, parent.context, subscribe) : subscribe(undefined);
    },
    logFields,
    shutdown: () => sdk.shutdown(),
  };
}

/** The request's path, its query left off: asked of every request at the door, so no array is made. */
function pathOf(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * A subscribe over WebSocket is a span of kind server, as an HTTP request is; over SSE it is the
 * child of its stream's HTTP span. The subscribe answers with the execution's arguments (bare,
 * or as `args`), whose document names the operation (clients seldom send an operationName), or
 * refuses with a list of errors: the span then ends in error, with the first one's code.
 */
async function traceSubscribe<T>(tracer: Tracer, operationName: string | null | undefined, parent: Context, subscribe: (trace: Trace) => Promise<T>): Promise<T> {
  const attributes = { 'graphql.operation.type': 'subscription', ...(operationName ? { 'graphql.operation.name': operationName } : {}) };
  const kind = trace.getSpan(parent) ? SpanKind.INTERNAL : SpanKind.SERVER;
  const span = tracer.startSpan(operationName ? `subscription ${operationName}` : 'subscription', { kind, attributes }, parent);
  try {
    const active = trace.setSpan(parent, span);
    const result = await context.with(active, subscribe, undefined, new RequestTrace(active));
    if (Array.isArray(result)) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: String((result[0] as { code?: unknown } | undefined)?.code ?? 'refused') });
    } else {
      const args = (result as { args?: ExecutionArgs }).args ?? result;
      const { document, operationName: named } = args as Partial<ExecutionArgs>;
      const name = document && getOperationAST(document, named)?.name?.value;
      if (name && !operationName) {
        span.setAttribute('graphql.operation.name', name);
        span.updateName(`subscription ${name}`);
      }
    }
    return result;
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

function logFields(): Record<string, string> {
  const context = trace.getActiveSpan()?.spanContext();
  return context && isSpanContextValid(context) ? { traceId: context.traceId, spanId: context.spanId } : {};
}
