import { type Context, context, trace } from '@opentelemetry/api';
import type { Trace } from '../common/trace';

/** A recorded request's (or subscription operation's) context, carried with the request. */
export class RequestTrace implements Trace {
  constructor(readonly context: Context) {}

  run<T>(work: () => T): T {
    return context.with(this.context, work);
  }

  logFields(): { traceId: string; spanId: string } {
    const { traceId, spanId } = trace.getSpanContext(this.context)!;
    return { traceId, spanId };
  }
}

/** The active context as a trace when a recorded span is in it: inside a sampled request's `emit`. */
export function activeTrace(): RequestTrace | undefined {
  const active = context.active();
  return trace.getSpan(active)?.isRecording() ? new RequestTrace(active) : undefined;
}

/** The trace `carrier` holds, when it holds one made here. */
export function carriedTrace(carrier: unknown): RequestTrace | undefined {
  const held = (carrier as { trace?: unknown } | undefined)?.trace;
  return held instanceof RequestTrace ? held : undefined;
}
