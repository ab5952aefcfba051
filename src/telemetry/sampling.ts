import { randomFillSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { type Context, diag, propagation, ROOT_CONTEXT, type Sampler, SpanKind, trace } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';

const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler } = tracing;

/**
 * The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, built as the SDK builds it
 * (parentbased_always_on when unset or unknown).
 */
export function samplerFromEnv(env: Record<string, string | undefined>): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  const ratio = () => {
    const value = Number(env.OTEL_TRACES_SAMPLER_ARG?.trim() || 1);
    return Number.isFinite(value) ? value : 1;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    default:
      diag.error(`unknown OTEL_TRACES_SAMPLER value "${name}", using parentbased_always_on`);
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * The sampler the SDK itself runs once every root has passed the door (`sampledAtTheDoor`):
 * always on. A root or a remote parent's child is recorded, since the door let it in; a local
 * span's parent is a recorded span, since only a request the door kept makes spans, and pg's and
 * ioredis's make none without a parent. A parent-based sampler would decide the same, reading and
 * validating the parent's context again for every span.
 */
export function admittedSampler(): Sampler {
  return new AlwaysOnSampler();
}

/** Random bytes drawn 256 trace ids at a time: one native call where each id cost four `Math.random` conversions. */
const randomPool = Buffer.allocUnsafe(16 * 256);
let poolAt = randomPool.length;

/** A random trace id (32 hex digits), as the SDK makes them, for the sampler to decide on: drawn for every request at the door. */
function randomTraceId(): string {
  if (poolAt === randomPool.length) {
    randomFillSync(randomPool);
    poolAt = 0;
  }
  const id = randomPool.toString('hex', poolAt, poolAt + 16);
  poolAt += 16;
  return id;
}

/**
 * The sampling decision for a trace's root, taken before any span, attribute or context exists:
 * a request left unrecorded then runs as if tracing were off. `parent` is the caller's context
 * (a W3C traceparent), whose trace id and flags the configured sampler reads as the SDK would.
 */
export function sampledAtTheDoor(sampler: Sampler, parent: Context, name: string, kind: SpanKind): boolean {
  const traceId = trace.getSpanContext(parent)?.traceId ?? randomTraceId();
  return sampler.shouldSample(parent, traceId, name, kind, {}, []).decision !== SamplingDecision.NOT_RECORD;
}

/**
 * The door for incoming HTTP requests: the caller's context read from the headers the configured
 * propagators (OTEL_PROPAGATORS) read, and a request carrying none of them (most) spared the read.
 * Answers that context when the sampler keeps the request, else undefined.
 */
export function requestDoor(sampler: Sampler): (headers: IncomingHttpHeaders) => Context | undefined {
  const fields = propagation.fields().map((field) => field.toLowerCase());
  return (headers) => {
    const parent = fields.some((field) => headers[field] !== undefined) ? propagation.extract(ROOT_CONTEXT, headers) : ROOT_CONTEXT;
    return sampledAtTheDoor(sampler, parent, 'HTTP', SpanKind.SERVER) ? parent : undefined;
  };
}
