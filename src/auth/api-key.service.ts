import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../common/bounded-cache';
import type { Page, PageRequest } from '../common/page';
import { trimName } from '../common/validators';
import { isDatabaseUnavailable, isUniqueViolation } from '../sql/pg-errors';
import type { Statements } from '../sql/statements';
import { keysetPage } from '../sql/rows';
import { ApiError, notFound } from '../errors';
import { ADMIN_KEY_QUOTA, Plan } from './plans';
import { ApiKey } from './api-key.entity';
import { type NewApiKeyInput, checkCustomQuota } from './api-key.inputs';
import type { AuthenticatedKey } from './caller';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './key-secret';
import { ApiKeyRole } from './role';

export interface IssuedKey {
  /** The key itself: shown this once, never stored. */
  key: string;
  apiKey: ApiKey;
}

const toAuthenticated = (row: ApiKey): AuthenticatedKey => ({ id: row.id, role: row.role, plan: row.plan, quota: row.quota });

/**
 * How long a key lookup is reused. It saves a statement on almost every request; the price is
 * that a key revoked on another instance is still accepted there for up to this long.
 */
export const KEY_CACHE_TTL_MS = 5_000;
const KEY_CACHE_SIZE = 10_000;

/** What an instance knows of keys, shared by every request's service. */
export interface KeyCache {
  /** Lookups by key hash, unknown keys included (an invalid-key flood must not reach the database). */
  answers: LRUCache<string, { key: AuthenticatedKey | null }>;
  /**
   * Look-ups under way, by key hash: requests that present one key while it is not cached (a
   * page's parallel queries, once its entry has expired) wait for one statement, not one each.
   */
  lookups: Map<string, Promise<ApiKey | null>>;
}

/** `clock` stands in for the cache's timer in tests. */
export function keyCache(clock?: () => number): KeyCache {
  // ttlResolution 0: read the clock on each lookup rather than start a timer to cache it.
  // noDeleteOnStaleGet: an entry past its time stays until a fresh lookup replaces it (or the
  // size bound evicts it), to stand in while the database cannot be asked (authenticate).
  const answers = boundedCache<string, { key: AuthenticatedKey | null }>(KEY_CACHE_SIZE, { ttl: KEY_CACHE_TTL_MS, ttlResolution: 0, noDeleteOnStaleGet: true, perf: clock && { now: clock } });
  return { answers, lookups: new Map() };
}

export class ApiKeyService {
  /** `cache` is shared by every request's service: a revocation clears it for all. */
  constructor(
    private readonly db: Statements,
    private readonly cache: KeyCache = keyCache(),
  ) {}

  /**
   * The key behind an X-API-Key header, or null when it is unknown or revoked. While the database
   * cannot be reached, the last answer it gave this instance stands in, however old (a revocation
   * made here meanwhile still counts: it removes the entry); without one the failure is thrown.
   */
  async authenticate(rawKey: string): Promise<AuthenticatedKey | null> {
    if (!looksLikeApiKey(rawKey)) return null;
    const hash = hashApiKey(rawKey);
    const cached = this.cache.answers.get(hash);
    if (cached) return cached.key;
    let row: ApiKey | null;
    try {
      row = await this.lookUp(hash);
    } catch (error) {
      const lastKnown = isDatabaseUnavailable(error) ? this.cache.answers.get(hash, { allowStale: true }) : undefined;
      if (lastKnown) return lastKnown.key;
      throw error;
    }
    const key = row && !row.revokedAt ? toAuthenticated(row) : null;
    this.cache.answers.set(hash, { key });
    return key;
  }

  private lookUp(hash: string): Promise<ApiKey | null> {
    const { lookups } = this.cache;
    const underWay = lookups.get(hash);
    if (underWay) return underWay;
    const lookup = this.db.repository(ApiKey, (keys) => keys.findOneBy({ keyHash: hash })).finally(() => lookups.delete(hash));
    lookups.set(hash, lookup);
    return lookup;
  }

  async create(input: NewApiKeyInput): Promise<IssuedKey> {
    checkCustomQuota(input);
    const key = generateApiKey();
    const apiKey = await this.db.repository(ApiKey, (keys) =>
      keys.save(
        keys.create({
          name: trimName(input.name),
          keyHash: hashApiKey(key),
          plan: input.plan,
          role: input.role,
          customPerMinute: input.requestsPerMinute ?? null,
          customPerDay: input.requestsPerDay ?? null,
        }),
      ),
    );
    return { key, apiKey };
  }

  list(page: PageRequest): Promise<Page<ApiKey>> {
    return this.db.repository(ApiKey, (keys) => keysetPage(keys.createQueryBuilder('key'), 'key.id', page));
  }

  count(): Promise<number> {
    return this.db.repository(ApiKey, (keys) => keys.count());
  }

  findById(id: string): Promise<ApiKey | null> {
    return this.db.repository(ApiKey, (keys) => keys.findOneBy({ id }));
  }

  /** Revoking twice is harmless; the key that ADMIN_API_KEY configures is revoked by unsetting it. */
  async revoke(id: string): Promise<ApiKey> {
    const apiKey = await this.findById(id);
    if (!apiKey) throw notFound(`API key ${id}`);
    if (apiKey.fromEnvironment) {
      throw new ApiError('FORBIDDEN', 'This key is set by ADMIN_API_KEY; change the configuration to revoke it');
    }
    if (!apiKey.revokedAt) {
      apiKey.revokedAt = new Date();
      await this.db.repository(ApiKey, (keys) => keys.save(apiKey));
    }
    this.cache.answers.delete(apiKey.keyHash);
    return apiKey;
  }

  /**
   * Makes the database agree with ADMIN_API_KEY: one admin row holding its hash, or, when it is
   * unset, no valid row left from an earlier configuration. One statement each, so instances
   * starting together cannot both insert. Its ON CONFLICT arbitrates on the environment's row only:
   * an instance that inserted the same hash at the same moment makes the statement fail on the
   * hash's own unique index, and once more finds the row and updates it.
   */
  async syncEnvironmentKey(rawKey: string | undefined): Promise<void> {
    this.cache.answers.clear();
    if (!rawKey) {
      await this.db.query('UPDATE api_keys SET revoked_at = now() WHERE from_environment AND revoked_at IS NULL');
      return;
    }
    try {
      await this.upsertEnvironmentKey(rawKey);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      await this.upsertEnvironmentKey(rawKey);
    }
  }

  private async upsertEnvironmentKey(rawKey: string): Promise<void> {
    await this.db.query(
      `INSERT INTO api_keys (name, key_hash, plan, role, requests_per_minute, requests_per_day, from_environment)
       VALUES ('ADMIN_API_KEY', $1, $2, $3, $4, $5, true)
       ON CONFLICT (from_environment) WHERE from_environment DO UPDATE
         SET key_hash = EXCLUDED.key_hash, plan = EXCLUDED.plan, role = EXCLUDED.role,
             requests_per_minute = EXCLUDED.requests_per_minute, requests_per_day = EXCLUDED.requests_per_day,
             revoked_at = NULL`,
      [hashApiKey(rawKey), Plan.ENTERPRISE, ApiKeyRole.ADMIN, ADMIN_KEY_QUOTA.perMinute, ADMIN_KEY_QUOTA.perDay],
    );
  }
}
