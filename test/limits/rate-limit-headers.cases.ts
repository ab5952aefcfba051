import pino from 'pino';
import { refusal } from '../../src/limits/admit';
import type { Decision, Refusal } from '../../src/limits/limiter';
import { rateLimitHeaders } from '../../src/limits/rate-limit-headers';
import { DAY_MS, MINUTE_MS, type WindowState } from '../../src/limits/window';

// 2023-11-14T22:13:20.250Z: the 250 ms show that seconds are rounded up.
const NOW = 1_700_000_000_250;

const minute = (remaining: number, resetAt: number): WindowState => ({
  name: 'minute',
  limit: 60,
  lengthMs: MINUTE_MS,
  remaining,
  resetAt,
});
const day = (remaining: number, resetAt: number): WindowState => ({
  name: 'day',
  limit: 1000,
  lengthMs: DAY_MS,
  remaining,
  resetAt,
});

describe('rateLimitHeaders', () => {
  it('describes the reported window and both windows in the IETF fields', () => {
    const windows = [minute(59, NOW + 41_500), day(999, NOW + 49_999_001)];
    const decision: Decision = { kind: 'allowed', windows, reported: windows[0], decidedAt: NOW };
    expect(rateLimitHeaders(decision)).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '59',
      'X-RateLimit-Reset': '1700000042',
      'RateLimit-Policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      RateLimit: '"minute";r=59;t=42, "day";r=999;t=50000',
    });
  });

  it('reports a window that is not running with its whole limit and length', () => {
    const windows = [minute(60, NOW + MINUTE_MS), day(1000, NOW + DAY_MS)];
    const headers = rateLimitHeaders({ windows, reported: windows[0], decidedAt: NOW });
    expect(headers.RateLimit).toBe('"minute";r=60;t=60, "day";r=1000;t=86400');
    expect(headers['Retry-After']).toBeUndefined();
  });

  /** The refusal the admission step answers a refused decision with, as its answer's headers. */
  const refusalHeaders = (decision: Refusal) =>
    refusal(decision, { kind: 'anonymous', address: '203.0.113.7' }, 'ip:203.0.113.7', { observeRefusal: () => undefined }, pino({ level: 'silent' })).responseHeaders();

  it('leaves Retry-After to the refusal, which carries the decision\'s', () => {
    const windows = [minute(0, NOW + 12_001), day(900, NOW + 1_000_000)];
    const decision: Decision = {
      kind: 'limited',
      windows,
      reported: windows[0],
      decidedAt: NOW,
      retryAfterSeconds: 13,
    };
    expect(rateLimitHeaders(decision)).toMatchObject({
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.ceil((NOW + 12_001) / 1000)),
      RateLimit: '"minute";r=0;t=13, "day";r=900;t=1000',
    });
    expect(rateLimitHeaders(decision)['Retry-After']).toBeUndefined();
    expect(refusalHeaders(decision as Refusal)).toEqual({ 'Retry-After': '13' });
  });

  it('gives a ban\'s refusal Retry-After until the ban ends', () => {
    const windows = [minute(0, NOW + 5_000), day(900, NOW + 1_000_000)];
    const decision: Decision = {
      kind: 'banned',
      windows,
      reported: windows[0],
      decidedAt: NOW,
      banStarted: false,
      bannedUntil: NOW + 900_000,
      retryAfterSeconds: 900,
    };
    expect(refusalHeaders(decision as Refusal)).toEqual({ 'Retry-After': '900' });
  });
});
