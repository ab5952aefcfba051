import type { DataSource } from 'typeorm';
import { withTimeout } from '../common/timeout';
import { formatLsn, parseLsn } from './lsn';
import { poolOf } from './pool';
import type { ReadReplicas } from './read-replicas';
import { ReadRoute } from './read-route';
import { UNKNOWN_POSITION, type WritePositions } from './write-positions';

/** The header that carries a commit's position to the client, and back (docs/contract.md). */
export const READ_AFTER_HEADER = 'X-Read-After';
/** The cookie that carries it too, for browsers, which send it back by themselves (to the same site). */
export const READ_AFTER_COOKIE = 'petstore_read_after';

/** How long reading the primary's position after a write may take before the caller's reads go to the primary instead. */
const POSITION_TIMEOUT_MS = 1_000;

/** What every request's reads share: the replicas, the callers' positions, the primary. */
export interface ReadYourWritesParts {
  replicas: ReadReplicas;
  positions: WritePositions;
  primary: DataSource;
  /** Told where each read request was sent (for the metrics). */
  onRouted?: (servedBy: 'primary' | 'replica') => void;
}

/**
 * One request's side of read-your-writes: who sent it (the limiter's identity), the position the
 * client says it has seen (X-Read-After), and its route. A read goes to a replica that has
 * replayed the caller's last commit, whichever instance it was made on; a write records where
 * the primary is once it has committed.
 */
export class RequestReads {
  readonly route: ReadRoute;

  constructor(
    private readonly parts: ReadYourWritesParts,
    private readonly identity: string,
    private readonly sent?: bigint,
  ) {
    this.route = new ReadRoute(parts.replicas);
  }

  /** From here on the request only reads: to a replica that has seen the caller's writes, if one is healthy. */
  async readFromReplica(): Promise<void> {
    const stored = await this.parts.positions.of(this.identity);
    const after = this.sent !== undefined && (stored === undefined || this.sent > stored) ? this.sent : stored;
    const replica = this.route.toReplica(after);
    this.parts.onRouted?.(replica ? 'replica' : 'primary');
  }

  /**
   * The request wrote: the primary's position now, past its commits, remembered for the caller
   * and returned for the client (X-Read-After). Unread, the caller's reads go to the primary for a while.
   */
  async recordWrite(): Promise<string | undefined> {
    let lsn: bigint | undefined;
    try {
      const { rows } = await withTimeout(poolOf(this.parts.primary).query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'), POSITION_TIMEOUT_MS);
      lsn = parseLsn(rows[0].lsn);
    } catch {
      lsn = undefined;
    }
    await this.parts.positions.remember(this.identity, lsn ?? UNKNOWN_POSITION);
    return lsn === undefined ? undefined : formatLsn(lsn);
  }

  /**
   * The Set-Cookie of `position`: kept as long as the gateway keeps positions, past which every
   * replica that takes reads has replayed it. Not secret, but no script of the page needs it.
   */
  cookieOf(position: string): string {
    return `${READ_AFTER_COOKIE}=${position}; Path=/; Max-Age=${Math.ceil(this.parts.positions.ttlMs / 1000)}; HttpOnly; SameSite=Lax`;
  }
}

/**
 * The position of the READ_AFTER_COOKIE in a Cookie header, or undefined. A cookie that names no
 * position is ignored rather than refused: the browser sends it, not the page.
 */
export function readAfterCookieOf(cookies: string | undefined): bigint | undefined {
  if (cookies === undefined) return undefined;
  for (const pair of cookies.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === READ_AFTER_COOKIE) return parseLsn(pair.slice(at + 1).trim());
  }
  return undefined;
}

/** The position an X-Read-After header names, or undefined when it names none (the caller refuses it). */
export const parseReadAfter = parseLsn;
