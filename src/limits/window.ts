import type { Quota } from './quota';

export type WindowName = 'minute' | 'day';

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** A fixed window as configured: at most `limit` requests per `lengthMs`. */
export interface WindowSpec {
  name: WindowName;
  limit: number;
  lengthMs: number;
}

/**
 * A window as it stands for one identity. A window that is not running (never started, or freed)
 * has its whole limit left and would reset `lengthMs` after now, since the next counted request
 * starts it.
 */
export interface WindowState {
  name: WindowName;
  limit: number;
  lengthMs: number;
  remaining: number;
  /** Epoch milliseconds at which the window frees. */
  resetAt: number;
}

/** The two windows of a quota, minute first. */
export function windowsFor(quota: Quota): WindowSpec[] {
  return [
    { name: 'minute', limit: quota.perMinute, lengthMs: MINUTE_MS },
    { name: 'day', limit: quota.perDay, lengthMs: DAY_MS },
  ];
}

/** The state of `spec` given what a store holds for it: `resetAt` null when it is not running. */
export function windowState(spec: WindowSpec, count: number, resetAt: number | null, now: number): WindowState {
  const running = resetAt !== null && resetAt > now;
  return {
    name: spec.name,
    limit: spec.limit,
    lengthMs: spec.lengthMs,
    remaining: running ? Math.max(0, spec.limit - count) : spec.limit,
    resetAt: running ? resetAt : now + spec.lengthMs,
  };
}

/**
 * The window that will run out first: the fewest requests left, and on a tie the one that
 * resets first (it is the one a client will meet next).
 */
export function firstToRunOut(windows: readonly WindowState[]): WindowState {
  if (windows.length === 0) throw new Error('expected at least one window, got none');
  return windows.reduce((best, w) =>
    w.remaining < best.remaining || (w.remaining === best.remaining && w.resetAt < best.resetAt) ? w : best,
  );
}

/** Among the full windows, the one that frees last: a refused request cannot succeed before then. */
export function refusingWindow(windows: readonly WindowState[]): WindowState | undefined {
  let refusing: WindowState | undefined;
  for (const w of windows) {
    if (w.remaining <= 0 && (refusing === undefined || w.resetAt > refusing.resetAt)) refusing = w;
  }
  return refusing;
}
