import pino from 'pino';
import { originalStack } from './common/source-stack';
import { traceLogMixin } from './telemetry';

export type Logger = pino.Logger;

/**
 * JSON lines on stdout, API keys and cookies never written. Lines are buffered (4 KiB, or
 * `flushEveryMs`, a second by default, at most) and written asynchronously: a write per request line would cost a system call
 * each. The buffer is flushed when the process exits.
 *
 * A destination that fails (stdout a pipe nobody reads any more: EPIPE) is given up for good: the
 * gateway keeps serving without a log rather than crash, pile up lines, or hang at exit, where the
 * synchronous flush would retry the failing write forever.
 */
export function createLogger(level: string, flushEveryMs = 1_000): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  let failed = false;
  destination.on('error', () => {
    failed = true;
  });
  const sink = {
    write: (line: string) => {
      if (!failed) destination.write(line);
    },
    flush: (done?: (error?: Error) => void) => {
      if (failed) done?.();
      else destination.flush(done);
    },
  };
  setInterval(() => sink.flush(), flushEveryMs).unref();
  process.once('exit', () => {
    if (!failed) destination.flushSync();
  });
  const mixin = traceLogMixin();
  return pino(
    {
      level,
      // While tracing, a line written inside a span carries its trace id (docs/contract.md §10).
      ...(mixin ? { mixin } : {}),
      serializers: { err: serializeError },
      redact: ['req.headers["x-api-key"]', 'req.headers.cookie', 'req.headers.authorization'],
    },
    sink,
  );
}

/**
 * Writes out the buffered lines before an orderly exit, waiting `withinMs` at most. Done
 * asynchronously, a write that fails is noticed and the exit's synchronous flush skipped.
 */
export function flushLog(logger: Logger, withinMs = 1_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, withinMs);
    logger.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The fields of an error a log line may carry. */
const LOGGED_ERROR_FIELDS = ['type', 'message', 'stack', 'code', 'severity', 'routine', 'query', 'cause'];

/**
 * pino's error serializer, keeping only fields that never hold request data. A failed statement
 * (TypeORM's QueryFailedError, pg's DatabaseError) carries its bound `parameters` and a `detail`
 * such as "Key (idempotency_key)=(…) already exists": an idempotency key or a name must not reach
 * the log. The SQL text itself stays: its values are always bound, never inlined. The stack
 * names the TypeScript sources' lines (source-stack.ts).
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const plain = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  return Object.fromEntries(
    LOGGED_ERROR_FIELDS.filter((field) => plain[field] !== undefined).map((field) => [
      field,
      field === 'cause' ? serializeError(plain[field]) : field === 'stack' && typeof plain.stack === 'string' ? originalStack(plain.stack) : plain[field],
    ]),
  );
}

/** A logger whose `err` fields go through serializeError, whatever logger it is given. */
export function withSafeErrors(logger: Logger): Logger {
  return logger.child({}, { serializers: { err: serializeError } });
}

/** How long a flood of one refusal is summed up for. */
export const FLOOD_INTERVAL_MS = 10_000;
/** Keys told apart in one interval; past these, lines are summed up under one key. */
const MAX_FLOOD_KEYS = 10_000;

/**
 * Warn lines that collapse floods: of the lines of one key (an identity and a reason) in an
 * interval, the first is written and the rest counted; when the interval ends, one line says how
 * many more there were. A crowd refused thousands of times a second writes a line per key and
 * interval, not one per refusal.
 */
export class FloodLog {
  private readonly seen = new Map<string, { fields: object; message: string; more: number }>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = FLOOD_INTERVAL_MS,
  ) {}

  warn(key: string, fields: object, message: string): void {
    const bounded = this.seen.size < MAX_FLOOD_KEYS || this.seen.has(key) ? key : '*';
    const earlier = this.seen.get(bounded);
    if (earlier) {
      earlier.more += 1;
      return;
    }
    this.seen.set(bounded, { fields, message, more: 0 });
    this.logger.warn(fields, message);
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs).unref();
  }

  /** Ends the interval: a summary line for each key with lines held back. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const seconds = this.intervalMs / 1000;
    for (const { fields, message, more } of this.seen.values()) {
      if (more > 0) this.logger.warn({ ...fields, more }, `${message}: ${more} more like this in the last ${seconds} s`);
    }
    this.seen.clear();
  }
}
