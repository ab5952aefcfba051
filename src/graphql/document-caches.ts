import { createHash } from 'node:crypto';
import { InMemoryLRUCache } from '@apollo/utils.keyvaluecache';
import type { DocumentNode } from 'graphql';

/**
 * Parsed documents kept at most, and their source text in all. A parsed document takes about 45
 * bytes of heap per character of its source (its tokens, locations and nodes), so the text
 * bound holds them to about 50 MB whatever clients send; a document pushed out is parsed and
 * validated again if it returns.
 */
export const MAX_CACHED_DOCUMENTS = 2_000;
export const MAX_CACHED_DOCUMENT_CHARS = 1 << 20;

/** Automatic persisted queries held in this process when no Redis shares them, and their text in all. */
export const MAX_PERSISTED_QUERIES = 10_000;
export const MAX_PERSISTED_QUERY_CHARS = 4 << 20;

/** The length of the source a document was parsed from (its size in the caches). */
export function sourceLength(document: DocumentNode): number {
  return Math.max(1, document.loc?.source.body.length ?? 1);
}

/** Apollo's document store behind the prepared and trusted documents: bounded in count and text. */
export function documentCache(): InMemoryLRUCache<DocumentNode> {
  return new InMemoryLRUCache<DocumentNode>({ max: MAX_CACHED_DOCUMENTS, maxSize: MAX_CACHED_DOCUMENT_CHARS, sizeCalculation: sourceLength });
}

/**
 * Apollo's cache of automatic persisted queries when there is no Redis. Apollo's default counts
 * only the text against 30 MB, so a million one-line queries fit, each with its key and entry.
 */
export function persistedQueryCache(): InMemoryLRUCache<string> {
  return new InMemoryLRUCache<string>({ max: MAX_PERSISTED_QUERIES, maxSize: MAX_PERSISTED_QUERY_CHARS });
}

/** A document text's SHA-256 in hex: Apollo's key for it (APQ hash, document store) and a manifest's. */
export function documentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
