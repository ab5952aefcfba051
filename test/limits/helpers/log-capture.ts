import pino from 'pino';
import type { Logger } from '../../../src/logger';

export interface CapturedLog {
  logger: Logger;
  /** Messages logged at `level` ('warn', 'info', …) so far. */
  messages(level: string): string[];
}

/** A pino logger whose lines the test can read. */
export function captureLog(): CapturedLog {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return {
    logger,
    messages: (level) => lines.filter((line) => line.level === pino.levels.values[level]).map((line) => line.msg),
  };
}
