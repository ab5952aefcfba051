import { readFileSync } from 'node:fs';

/** Sockets per instance when the open-file limit cannot be read (not Linux, or unlimited). */
export const DEFAULT_SOCKET_CEILING = 4_096;

/**
 * The process's soft limit on open files (RLIMIT_NOFILE), read from /proc on Linux; undefined
 * elsewhere or when unlimited. Node has no getrlimit, and this is read once at start-up.
 */
export function openFileLimit(procLimits = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(procLimits, 'utf8');
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+)/m.exec(text)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/**
 * The instance's socket ceiling: the configured one, else half the open-file limit, leaving the
 * other half to HTTP connections, the database pool, Redis and files, so that they are always served.
 */
export function socketCeiling(configured: number | undefined, fileLimit: number | undefined): number {
  if (configured !== undefined) return configured;
  return fileLimit === undefined ? DEFAULT_SOCKET_CEILING : Math.max(1, Math.floor(fileLimit / 2));
}
