import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { setHeaders, writeText } from './respond';

/**
 * Who may keep an answer (docs/contract.md §10). Both revalidate before every reuse (`no-cache`):
 * `public`, the anonymous catalogue, which a CDN may hold and revalidate for everyone;
 * `private`, an answer that depends on the caller (its key, its orders, its quota), which only
 * the caller's own cache may hold.
 */
export type CacheScope = 'public' | 'private';

const CACHE_CONTROL: Record<CacheScope, string> = { public: 'no-cache', private: 'private, no-cache' };

/** The Cache-Control of a scope. */
export function cacheControlOf(scope: CacheScope): string {
  return CACHE_CONTROL[scope];
}

/**
 * The Cache-Control of the anonymous catalogue when the response cache vouches for it: browsers
 * revalidate before each reuse (a caller reads its own writes), shared caches (a CDN) may keep it
 * `seconds`, purged sooner by its Surrogate-Key / Cache-Tag.
 */
export function sharedCacheControl(seconds: number): string {
  return `public, max-age=0, s-maxage=${seconds}`;
}

/** One answer of a safe GET that may be kept and revalidated: its exact bytes and what selects them. */
export interface Cacheable {
  type: string;
  body: string;
  cacheControl: string;
  /** Request headers that select this representation; X-API-Key always does. */
  vary?: readonly string[];
  /** Response headers that are part of what the answer says (a total beside a page), sent and tagged with the body. */
  tagged?: Readonly<Record<string, string>>;
}

/** Gives back what admission counted and rewrites the rate-limit headers to match. */
export type NotModifiedHook = () => Promise<void>;

/**
 * A strong entity tag: the SHA-256 of the content type, the tagged headers and the body bytes,
 * so that two answers share a tag exactly when a client would see the same representation.
 */
export function strongTag(type: string, body: string, tagged: Readonly<Record<string, string>> = {}): string {
  const hash = createHash('sha256').update(type).update('\n');
  for (const name of Object.keys(tagged).sort()) hash.update(`${name.toLowerCase()}: ${tagged[name]}\n`);
  return `"${hash.update('\n').update(body).digest('base64url')}"`;
}

const ENTITY_TAG = /(?:W\/)?("[^"]*")/g;

/**
 * Whether an If-None-Match header matches `tag` (RFC 9110 §13.1.2): `*`, or any listed tag by
 * the weak comparison (`W/"x"` matches `"x"`). A header that lists no well-formed tag matches nothing.
 */
export function noneMatchHits(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  for (const [, opaque] of header.matchAll(ENTITY_TAG)) if (opaque === tag) return true;
  return false;
}

/** Adds request headers to Vary, keeping those already named (CORS's Origin). */
function addVary(res: ServerResponse, names: readonly string[]): void {
  const current = res.getHeader('Vary');
  const listed = typeof current === 'string' ? current.split(',').map((name) => name.trim()).filter(Boolean) : [];
  const known = new Set(listed.map((name) => name.toLowerCase()));
  for (const name of names) if (!known.has(name.toLowerCase())) listed.push(name);
  res.setHeader('Vary', listed.join(', '));
}

/**
 * Writes a 200 answer with its validator (ETag, Cache-Control, Vary), or, when the request's
 * If-None-Match holds its tag, `304 Not Modified` with the same validator and no body, after
 * `notModified` has given back the request's count (not for `If-None-Match: *`, which counts as a
 * 200 does; docs/contract.md §10). Only for successful answers of safe GETs.
 */
export async function writeCacheable(res: ServerResponse, answer: Cacheable, notModified: NotModifiedHook): Promise<void> {
  const tagged = answer.tagged ?? {};
  const etag = strongTag(answer.type, answer.body, tagged);
  setHeaders(res, tagged);
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', answer.cacheControl);
  addVary(res, ['X-API-Key', ...(answer.vary ?? [])]);
  const ifNoneMatch = res.req?.headers['if-none-match'];
  if (noneMatchHits(ifNoneMatch, etag)) {
    // `*` matches whatever the answer is: refunded, it would let a client run any query uncounted.
    if (ifNoneMatch?.trim() !== '*') await notModified();
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.statusCode = 304;
    res.end();
    return;
  }
  writeText(res, 200, answer.type, answer.body);
}
