import pino from 'pino';
import type { Logger } from '../../src/logger';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLog {
  logger: Logger;
  /** Every line logged so far, parsed. */
  lines: LogLine[];
  /** Messages logged at `level` ('warn', 'info', …) so far. */
  messages(level: string): string[];
}

/** A pino logger whose lines the test can read. */
export function captureLog(level = 'info'): CapturedLog {
  const lines: LogLine[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return {
    logger,
    lines,
    messages: (name) => lines.filter((line) => line.level === pino.levels.values[name]).map((line) => line.msg),
  };
}
