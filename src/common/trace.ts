/**
 * A traced request's (or subscription operation's) place in its trace, carried by hand: the
 * gateway propagates no context through async hooks, which on Node 20 would slow every promise of
 * the process. The tracing code makes one for a request its sampler keeps; an untraced request,
 * and every request with tracing off, has none.
 */
export interface Trace {
  /**
   * Runs `work` with this trace current, for its synchronous call only: the spans an
   * instrumented library starts during the call (a Redis command sent) are the trace's children.
   */
  run<T>(work: () => T): T;
  /**
   * Makes every statement sent on `connection` (a pg client) a child of this trace, until the
   * returned function is called: statements are sent after awaits of their own (TypeORM's), past
   * any `run`.
   */
  attach(connection: object): () => void;
  /** The trace and span ids a log line of the request carries. */
  logFields(): { traceId: string; spanId: string };
}

/** `work()` inside `trace` when there is one; else `work()` as it is. */
export function inTrace<T>(trace: Trace | undefined, work: () => T): T {
  return trace ? trace.run(work) : work();
}
