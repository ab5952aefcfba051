import { parse } from 'graphql';
import {
  documentCache,
  MAX_CACHED_DOCUMENT_CHARS,
  MAX_CACHED_DOCUMENTS,
  MAX_PERSISTED_QUERIES,
  MAX_PERSISTED_QUERY_CHARS,
  persistedQueryCache,
} from '../../src/graphql/document-caches';

/** The in-memory caches of what clients send: each keeps to its count and its text, whatever arrives. */
describe('document caches', () => {
  it('keeps at most MAX_CACHED_DOCUMENTS parsed documents, the most recent', async () => {
    const cache = documentCache();
    for (let i = 0; i <= MAX_CACHED_DOCUMENTS; i += 1) await cache.set(`doc:${i}`, parse(`{ a${i}: __typename }`));
    expect(cache.keys()).toHaveLength(MAX_CACHED_DOCUMENTS);
    expect(await cache.get('doc:0')).toBeUndefined();
    expect(await cache.get(`doc:${MAX_CACHED_DOCUMENTS}`)).toBeDefined();
  });

  it('keeps parsed documents to MAX_CACHED_DOCUMENT_CHARS of source in all', async () => {
    const cache = documentCache();
    const fields = ' __typename'.repeat(MAX_CACHED_DOCUMENT_CHARS / 44);
    for (let i = 0; i < 5; i += 1) await cache.set(`doc:${i}`, parse(`{ a${i}: __typename ${fields} }`));
    const held = cache.keys().length;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(5);
  });

  it('keeps at most MAX_PERSISTED_QUERIES persisted queries, and MAX_PERSISTED_QUERY_CHARS of text', async () => {
    const cache = persistedQueryCache();
    for (let i = 0; i <= MAX_PERSISTED_QUERIES; i += 1) await cache.set(`apq:${i}`, `{ a${i}: __typename }`);
    expect(cache.keys()).toHaveLength(MAX_PERSISTED_QUERIES);
    const long = 'x'.repeat(MAX_PERSISTED_QUERY_CHARS / 4);
    for (let i = 0; i < 8; i += 1) await cache.set(`long:${i}`, long + i);
    expect(cache.keys().filter((key) => key.startsWith('long:')).length).toBeLessThanOrEqual(4);
  });
});
