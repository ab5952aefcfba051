import type { Decision } from './limiter';
import type { WindowState } from './window';

type HeaderSource = Pick<Decision, 'windows' | 'reported' | 'decidedAt'>;

/**
 * The rate-limit response headers of a decision (docs/contract.md §5):
 * - X-RateLimit-Limit / -Remaining / -Reset (Unix seconds, rounded up) for `reported`;
 * - RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-11) for every window,
 *   `t` in whole seconds rounded up, so a client that waits `t` finds the window free;
 * - Retry-After on refusals and bans.
 */
export function rateLimitHeaders(decision: HeaderSource): Record<string, string> {
  const { reported, windows, decidedAt } = decision;
  return {
    'X-RateLimit-Limit': String(reported.limit),
    'X-RateLimit-Remaining': String(reported.remaining),
    'X-RateLimit-Reset': String(Math.ceil(reported.resetAt / 1000)),
    'RateLimit-Policy': windows.map(policyItem).join(', '),
    RateLimit: windows.map((w) => `"${w.name}";r=${w.remaining};t=${secondsLeft(w, decidedAt)}`).join(', '),
  };
}

function policyItem(window: WindowState): string {
  return `"${window.name}";q=${window.limit};w=${Math.ceil(window.lengthMs / 1000)}`;
}

function secondsLeft(window: WindowState, now: number): number {
  return Math.max(0, Math.ceil((window.resetAt - now) / 1000));
}
