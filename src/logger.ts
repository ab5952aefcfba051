import pino from 'pino';

export type Logger = pino.Logger;

/** The longest a log line waits in the buffer. */
const FLUSH_EVERY_MS = 1_000;

/**
 * JSON lines on stdout, API keys and cookies never written. Lines are buffered (4 KiB, or a
 * second at most) and written asynchronously: a write per request line would cost a system call
 * each. The buffer is flushed when the process exits.
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
  process.once('exit', () => destination.flushSync());
  return pino(
    {
      level,
      redact: ['req.headers["x-api-key"]', 'req.headers.cookie', 'req.headers.authorization'],
    },
    destination,
  );
}
