import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Context, context, ROOT_CONTEXT, trace, type Tracer } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { inTrace, type Trace } from '../../src/common/trace';
import { enterHeldConnections } from '../../src/telemetry/pg-connections';
import { enterQueuedCommands } from '../../src/telemetry/redis-commands';
import { activeTrace, carriedTrace, RequestTrace } from '../../src/telemetry/request-trace';
import { SyncContextManager } from '../../src/telemetry/sync-context';

/**
 * The synchronous context manager and the trace a request carries by hand (src/telemetry): no
 * context crosses an await by itself, yet every span keeps its parent. pg's and ioredis's
 * instrumentations cannot run under jest (they patch modules as Node's require loads them), so
 * their stand-ins do what theirs do, read here in their code: read `context.active()` at the
 * call, and make no span without a parent (`requireParentSpan`).
 */
type ReadableSpan = tracing.ReadableSpan;
const exporter = new tracing.InMemorySpanExporter();
const provider = new tracing.BasicTracerProvider({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
const manager = new SyncContextManager();
let tracer: Tracer;
beforeAll(() => {
  context.setGlobalContextManager(manager);
  trace.setGlobalTracerProvider(provider);
  tracer = trace.getTracer('test');
});
afterAll(() => {
  context.disable();
  trace.disable();
});
beforeEach(() => exporter.reset());

/** pg's Client as its instrumentation leaves it: a span per query when the active context has one. */
class Client {
  query(text: string): Promise<string> {
    const parent = context.active();
    if (!trace.getSpan(parent)) return Promise.resolve(text);
    const span = tracer.startSpan(`pg.query:${text}`, undefined, parent);
    return Promise.resolve(text).finally(() => span.end());
  }
}

/** ioredis as its instrumentation and its auto-pipelining leave it: commands queued in one turn, sent in the next. */
class Redis {
  private queued?: Pipeline;

  command(name: string): Promise<void> {
    if (!this.queued) {
      const pipeline = (this.queued = new Pipeline());
      setImmediate(() => {
        this.queued = undefined;
        for (const command of pipeline.commands) this.sendCommand(command);
      });
    }
    this.queued.sendCommand({ name });
    return Promise.resolve();
  }

  sendCommand(command: { name: string }): void {
    const parent = context.active();
    if (trace.getSpan(parent)) tracer.startSpan(command.name, undefined, parent).end();
  }

  static Pipeline: typeof Pipeline;
}
class Pipeline {
  readonly commands: { name: string }[] = [];
  sendCommand(command: { name: string }): void {
    this.commands.push(command);
  }
}
Redis.Pipeline = Pipeline;
enterHeldConnections(Client as never);
enterQueuedCommands(Redis as never);

function spanNamed(name: string): ReadableSpan {
  const span = exporter.getFinishedSpans().find((each) => each.name === name);
  if (!span) throw new Error(`expected a span named ${name}, got ${exporter.getFinishedSpans().map((each) => each.name).join(', ')}`);
  return span;
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** Waits as a request does between its steps: a promise, a timer, an I/O turn. */
async function awaits(): Promise<void> {
  await Promise.resolve();
  await new Promise((resolve) => setTimeout(resolve, 1));
  await nextTurn();
}

describe('the synchronous context manager', () => {
  it('holds a context for the call of `with` only: none is left after it, nor across an await', async () => {
    const span = tracer.startSpan('server');
    const ctx = trace.setSpan(ROOT_CONTEXT, span);
    let inside: Context | undefined;
    let afterAwait: Context | undefined;
    const pending = context.with(ctx, async () => {
      inside = context.active();
      await awaits();
      afterAwait = context.active();
    });
    expect(context.active()).toBe(ROOT_CONTEXT);
    await pending;
    expect(inside).toBe(ctx);
    expect(afterAwait).toBe(ROOT_CONTEXT);
    span.end();
  });

  it('restores the outer context after a nested `with`, even one that throws', () => {
    const outer = ROOT_CONTEXT.setValue(Symbol('outer'), 1);
    const inner = ROOT_CONTEXT.setValue(Symbol('inner'), 2);
    context.with(outer, () => {
      expect(() =>
        context.with(inner, () => {
          expect(context.active()).toBe(inner);
          throw new Error('thrown');
        }),
      ).toThrow('thrown');
      expect(context.active()).toBe(outer);
    });
    expect(context.active()).toBe(ROOT_CONTEXT);
  });

  it('binds a function to its context, and leaves an emitter as it is', () => {
    const ctx = ROOT_CONTEXT.setValue(Symbol('bound'), 1);
    const bound = context.bind(ctx, function (this: unknown, value: number) {
      return { active: context.active(), self: this, value };
    });
    expect(bound.call('self', 3)).toEqual({ active: ctx, self: 'self', value: 3 });
    const emitter = { on: () => undefined };
    expect(context.bind(ctx, emitter)).toBe(emitter);
  });
});

describe('a trace carried by hand', () => {
  it('keeps every parent across an await chain: server span → operation span → pg span → ioredis span', async () => {
    const client = new Client();
    const redis = new Redis();
    const server = tracer.startSpan('server');
    // The request listener's first step, inside the HTTP span's context.
    const request = context.with(trace.setSpan(ROOT_CONTEXT, server), activeTrace);
    expect(request).toBeInstanceOf(RequestTrace);
    await awaits();

    // The operation plugin, from the trace the GraphQL context carries.
    const operation = tracer.startSpan('operation', undefined, carriedTrace({ trace: request })!.context);
    const inOperation = new RequestTrace(trace.setSpan(request!.context, operation));
    await awaits();

    // A statement sent after awaits of its own, as TypeORM's are, on a connection the trace holds.
    const statement = tracer.startSpan('statement', undefined, inOperation.context);
    const inStatement = new RequestTrace(trace.setSpan(inOperation.context, statement));
    const detach = inStatement.attach(client);
    await awaits();
    await client.query('select');
    detach();
    await client.query('unheld');

    // A Redis command issued inside the trace, sent in a later turn with its pipeline.
    const pgSpan = spanNamed('pg.query:select');
    const inPg = new RequestTrace(trace.setSpan(ROOT_CONTEXT, { spanContext: () => pgSpan.spanContext() } as never));
    await awaits();
    await inTrace<Promise<void>>(inPg, () => redis.command('evalsha'));
    await awaits();

    statement.end();
    operation.end();
    server.end();
    expect(parentOf(spanNamed('operation'))).toBe(server.spanContext().spanId);
    expect(parentOf(spanNamed('statement'))).toBe(operation.spanContext().spanId);
    expect(parentOf(pgSpan)).toBe(statement.spanContext().spanId);
    expect(parentOf(spanNamed('evalsha'))).toBe(pgSpan.spanContext().spanId);
    for (const span of exporter.getFinishedSpans()) expect(span.spanContext().traceId).toBe(server.spanContext().traceId);
    // Released, the connection's statements belong to no trace.
    expect(exporter.getFinishedSpans().map((span) => span.name)).not.toContain('pg.query:unheld');
    expect(request!.logFields()).toEqual({ traceId: server.spanContext().traceId, spanId: server.spanContext().spanId });
  });

  it('gives each Redis command of one pipeline the parent it was issued under', async () => {
    const redis = new Redis();
    const first = tracer.startSpan('first');
    const second = tracer.startSpan('second');
    const traces: Trace[] = [first, second].map((span) => new RequestTrace(trace.setSpan(ROOT_CONTEXT, span)));
    await Promise.all([inTrace(traces[0], () => redis.command('get')), inTrace(traces[1], () => redis.command('set')), redis.command('untraced')]);
    await nextTurn();
    expect(parentOf(spanNamed('get'))).toBe(first.spanContext().spanId);
    expect(parentOf(spanNamed('set'))).toBe(second.spanContext().spanId);
    expect(exporter.getFinishedSpans().map((span) => span.name)).not.toContain('untraced');
  });

  it('makes no span for a request left out by the sampler: it carries no trace, and nothing finds one', async () => {
    const client = new Client();
    const redis = new Redis();
    // Unsampled: the request door runs the listener in a context with no span.
    const request = context.with(ROOT_CONTEXT, activeTrace);
    expect(request).toBeUndefined();
    expect(carriedTrace({ trace: request })).toBeUndefined();
    await inTrace(request, () => redis.command('evalsha'));
    await client.query('select');
    await nextTurn();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
