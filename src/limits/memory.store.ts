import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../common/bounded-cache';
import { dropWhere } from '../common/drop-where';
import type { BanPolicy, LimiterStore, StoreOutcome, StoreStatus } from './limiter-store';
import { refusingWindow, type WindowSpec, type WindowState, windowState } from './window';

interface Counter {
  count: number;
  resetAt: number;
  /** Requests given back in this run of the window (a window's, not the refusals' counter). */
  refunded?: number;
}

/** Refusals counted toward a ban in the refusing window's run, and when the run's first was decided. */
interface Refusals extends Counter {
  toldAt: number;
}

interface Entry {
  /** By window name; a plain object, a fraction of a Map's size for the two windows. */
  windows: Record<string, Counter | undefined>;
  refusals?: Refusals;
  bannedUntil?: number;
  /** When everything in this entry has expired and it can be dropped. */
  expiresAt: number;
}

const SWEEP_EVERY_MS = 60_000;
/**
 * Identities held at most (about 260 bytes each). Past it the one least recently seen is
 * forgotten, windows, refusals and ban alike: a client still sending is seen at every request,
 * so what goes is an idle one, which starts afresh if it returns.
 */
export const MAX_MEMORY_IDENTITIES = 50_000;

/**
 * The limiter state of this process. Each call runs to completion without awaiting, so it is
 * atomic within the process. Expired entries are swept lazily, at most once a minute of the
 * callers' clock, so memory stays proportional to the identities seen in the last day, and
 * never past `maxIdentities` of them.
 */
export class MemoryLimiterStore implements LimiterStore {
  private readonly entries: LRUCache<string, Entry>;
  private lastSweep = -Infinity;

  constructor(maxIdentities = MAX_MEMORY_IDENTITIES) {
    this.entries = boundedCache(maxIdentities);
  }

  /** Identities currently held (after the last sweep). */
  get size(): number {
    return this.entries.size;
  }

  /** Memory cannot become unreachable. */
  status(): StoreStatus {
    return 'ok';
  }

  async hit(identity: string, specs: WindowSpec[], now: number, ban: BanPolicy, sentAt = now): Promise<StoreOutcome> {
    this.sweep(now);
    const entry = this.entries.get(identity) ?? { windows: {}, expiresAt: now };
    const windows = this.states(entry, specs, now);
    if (entry.bannedUntil !== undefined && entry.bannedUntil > now) {
      return { kind: 'banned', windows, bannedUntil: entry.bannedUntil };
    }

    const refusing = refusingWindow(windows);
    if (refusing === undefined) {
      for (const state of windows) {
        const counter = entry.windows[state.name];
        const running = counter !== undefined && counter.resetAt > now;
        entry.windows[state.name] = running ? { ...counter, count: counter.count + 1 } : { count: 1, resetAt: state.resetAt };
        state.remaining -= 1;
        entry.expiresAt = Math.max(entry.expiresAt, state.resetAt);
      }
      this.entries.set(identity, entry);
      return { kind: 'allowed', windows };
    }

    const run = entry.refusals !== undefined && entry.refusals.resetAt > now ? entry.refusals : undefined;
    // Sent before its client could have heard of the run's first refusal: refused, counted toward nothing.
    if (run && sentAt < run.toldAt) return { kind: 'limited', windows, refusedBy: refusing.name };
    const previous = run?.count ?? 0;
    if (previous + 1 > ban.threshold) {
      entry.refusals = undefined;
      entry.bannedUntil = now + ban.durationMs;
      entry.expiresAt = Math.max(entry.expiresAt, entry.bannedUntil);
      this.entries.set(identity, entry);
      return { kind: 'banned', windows, bannedUntil: entry.bannedUntil };
    }
    // The count lives until the refusing window frees: a client that waits for it starts afresh.
    entry.refusals = { count: previous + 1, resetAt: refusing.resetAt, toldAt: run?.toldAt ?? now };
    entry.expiresAt = Math.max(entry.expiresAt, refusing.resetAt);
    this.entries.set(identity, entry);
    return { kind: 'limited', windows, refusedBy: refusing.name };
  }

  async refund(identity: string, counted: WindowState[], now: number): Promise<WindowState[]> {
    const entry = this.entries.get(identity);
    if (!entry) return counted.map((spec) => windowState(spec, 0, null, now));
    const running = counted.flatMap((window) => {
      const counter = entry.windows[window.name];
      return counter !== undefined && counter.resetAt === window.resetAt && counter.resetAt > now && counter.count > 0 ? [{ counter, limit: window.limit }] : [];
    });
    // All or nothing: a window that has given back its limit in this run gives back no more, and then neither does the other.
    if (running.every(({ counter, limit }) => (counter.refunded ?? 0) < limit)) {
      for (const { counter } of running) {
        counter.count -= 1;
        counter.refunded = (counter.refunded ?? 0) + 1;
      }
    }
    return this.states(entry, counted, now);
  }

  async peek(identity: string, specs: WindowSpec[], now: number): Promise<WindowState[]> {
    const entry = this.entries.get(identity);
    return entry ? this.states(entry, specs, now) : specs.map((spec) => windowState(spec, 0, null, now));
  }

  async bannedUntil(identity: string, now: number): Promise<number | null> {
    const until = this.entries.get(identity)?.bannedUntil;
    return until !== undefined && until > now ? until : null;
  }

  async unban(identity: string): Promise<void> {
    const entry = this.entries.get(identity);
    if (!entry) return;
    entry.bannedUntil = undefined;
    entry.refusals = undefined;
  }

  async ban(identity: string, untilMs: number, now: number): Promise<void> {
    if (untilMs <= now) return;
    const entry = this.entries.get(identity) ?? { windows: {}, expiresAt: now };
    entry.bannedUntil = Math.max(entry.bannedUntil ?? 0, untilMs);
    entry.expiresAt = Math.max(entry.expiresAt, untilMs);
    this.entries.set(identity, entry);
  }

  private states(entry: Entry, specs: WindowSpec[], now: number): WindowState[] {
    return specs.map((spec) => {
      const counter = entry.windows[spec.name];
      return windowState(spec, counter?.count ?? 0, counter?.resetAt ?? null, now);
    });
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    dropWhere(this.entries, (entry) => entry.expiresAt <= now);
  }
}
