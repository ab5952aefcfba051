import type { KeyValueCache } from '@apollo/utils.keyvaluecache';
import type { Caller } from '../auth/caller';
import { persistedQueriesPerDayOf } from '../auth/plans';
import { identityOf } from '../limits/identity';
import type { BanPolicy, LimiterStore } from '../limits/limiter-store';
import { DAY_MS } from '../limits/window';
import type { Registration } from './persisted-documents';

/** The largest document stored as an automatic persisted query, in bytes of text; a larger one still runs as a plain query. */
export const MAX_PERSISTED_QUERY_BYTES = 20 * 1024;

/** The response header naming why a registration was not stored (docs/contract.md §5). */
export const NOT_STORED_HEADER = 'Persisted-Query-Not-Stored';

/** Why a document sent with its hash ran without being stored. */
export type NotStored = 'PERSISTED_QUERY_TOO_LARGE' | 'PERSISTED_QUERY_LIMIT';

/** Apollo's prefix for its keys in the persisted-query cache. */
const APQ_KEY_PREFIX = 'apq:';

/** Counting registrations never bans: the request itself was counted, and is not refused. */
const NEVER_BAN: BanPolicy = { threshold: Number.MAX_SAFE_INTEGER, durationMs: 0 };

/**
 * Bounds what clients store as automatic persisted queries (docs/contract.md §5): a document of at
 * most MAX_PERSISTED_QUERY_BYTES, and a number per identity per day by plan, counted in the
 * limiter's store so that every instance sharing Redis shares the count. Past either bound the
 * document runs all the same, without its hash, so Apollo does not store it: a client whose
 * later hash-only request is unknown sends the document again, as after an expiry.
 */
export class PersistedQueryRegistrations {
  constructor(
    private readonly cache: KeyValueCache<string>,
    private readonly store: LimiterStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Undefined when Apollo may store the document (or has it already), else why not. */
  async check(caller: Caller, { query, hash }: Registration): Promise<NotStored | undefined> {
    if (Buffer.byteLength(query) > MAX_PERSISTED_QUERY_BYTES) return 'PERSISTED_QUERY_TOO_LARGE';
    // Sending a stored document again registers nothing new.
    if ((await this.cache.get(APQ_KEY_PREFIX + hash)) !== undefined) return undefined;
    const perDay = { name: 'day' as const, limit: persistedQueriesPerDayOf(caller), lengthMs: DAY_MS };
    const outcome = await this.store.hit(`apq:${identityOf(caller)}`, [perDay], this.clock(), NEVER_BAN);
    return outcome.kind === 'allowed' ? undefined : 'PERSISTED_QUERY_LIMIT';
  }
}
