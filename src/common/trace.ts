/**
 * A traced request's (or subscription operation's) place in its trace. The tracing code makes one
 * for a request its sampler keeps; an untraced request, and every request with tracing off, has
 * none. Work run in it (`run`) is in the trace, however many awaits it takes.
 */
export interface Trace {
  /**
   * Runs `work` with this trace current: the spans an instrumented library starts during it, and
   * during what it awaits (a Redis command sent, a statement), are the trace's children.
   */
  run<T>(work: () => T): T;
  /** The trace and span ids a log line of the request carries. */
  logFields(): { traceId: string; spanId: string };
}

/** `work()` inside `trace` when there is one; else `work()` as it is. */
export function inTrace<T>(trace: Trace | undefined, work: () => T): T {
  return trace ? trace.run(work) : work();
}
