import pino from 'pino';

export type Logger = pino.Logger;

/** JSON lines on stdout; API keys and cookies never reach the log. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: ['req.headers["x-api-key"]', 'req.headers.cookie', 'req.headers.authorization'],
  });
}
