import { createHash } from 'node:crypto';
import { type ApolloServerPlugin, type GraphQLRequest, type GraphQLRequestListener, type GraphQLResponse, HeaderMap } from '@apollo/server';
import { getVariableValues, type GraphQLSchema } from 'graphql';
import type { Caller } from '../auth/caller';
import { operationPolicies } from './cache-control';
import type { Tag } from '../cache/cache-tags';
import { tagsOfAnswer, UNTAGGABLE } from './answer-tags';
import type { ResponseCache } from '../cache/response-cache';
import type { Context } from '../context';

/** Response headers of a cacheable answer: whether it came from the cache, how old it is, and what it read. */
export const CACHE_HEADERS = { status: 'x-cache', surrogateKey: 'surrogate-key', cacheTag: 'cache-tag', age: 'age' } as const;

/** One request's part in the cache, from its lookup to its response. */
interface Cached {
  key: string;
  ttlMs: number;
  status: 'HIT' | 'MISS' | 'BYPASS';
  /** When its read began (a miss), or began for the answer served (a hit). */
  startedAt: number;
  /** A hit's tags, as kept with it. */
  tags?: readonly Tag[];
}

/** The identity whose writes a reader must see: a key's; anonymous callers cannot write. */
export function writerOf(caller: Caller | undefined): string | undefined {
  return caller?.kind === 'key' ? `key:${caller.key.id}` : undefined;
}

/**
 * The response cache in Apollo's request pipeline (docs/caching.md), through its documented hooks:
 * `responseForOperation` answers a query whose every field may be kept (the schema's hints) from
 * the cache, after the gateway's hooks have priced it and before it runs; on a miss,
 * `willSendResponse` keeps the answer, tagged with what its data shows it read, when it has no
 * error. A mutation marks its caller as a writer before its answer leaves, so that none of the
 * caller's later reads, on any instance, is served from before it. `replicaLagMs`: how far behind
 * the primary a replica that takes reads may be; an answer read there counts as that much older.
 */
export function responseCachePlugin(schema: GraphQLSchema, cache: ResponseCache, replicaLagMs = 0): ApolloServerPlugin<Context> {
  const policyOf = operationPolicies(schema);
  // Each request's part, kept beside its request: one listener serves every request.
  const requests = new WeakMap<GraphQLRequest, Cached>();
  const listener: GraphQLRequestListener<Context> = {
    async responseForOperation({ document, operation, request, contextValue, queryHash }): Promise<GraphQLResponse | null> {
      if (!operation) return null;
      const policy = policyOf(document, operation);
      if (policy.scope !== 'PUBLIC' || policy.maxAgeSeconds <= 0) return null;
      const caller = contextValue.caller;
      const key = keyOf(caller, queryHash, request.operationName, request.variables);
      const ttlMs = Math.min(policy.maxAgeSeconds * 1000, cache.maxAgeMs);
      const found = await cache.lookup(key, writerOf(caller));
      if (found.kind === 'hit') {
        const { answer } = found;
        requests.set(request, { key, ttlMs, status: 'HIT', startedAt: answer.startedAt, tags: answer.tags });
        return { http: { headers: new HeaderMap() }, body: { kind: 'single', singleResult: { data: JSON.parse(answer.body) } } };
      }
      // Read on a replica: as old as the replica may be.
      const lag = contextValue.services?.reads?.route.replica ? replicaLagMs : 0;
      requests.set(request, { key, ttlMs, status: found.kind === 'miss' ? 'MISS' : 'BYPASS', startedAt: Date.now() - lag });
      return null;
    },
    async willSendResponse({ operation, document, request, contextValue, response }) {
      if (operation?.operation === 'mutation') {
        const writer = writerOf(contextValue.caller);
        if (writer) await cache.wrote(writer);
        return;
      }
      const cached = requests.get(request);
      if (!cached || !operation || !document || response.body.kind !== 'single') return;
      const { data, errors } = response.body.singleResult;
      if (errors?.length || !data) return;
      let tags = cached.tags;
      if (!tags) {
        const { coerced } = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
        const read = coerced ? tagsOfAnswer(schema, document, operation, coerced, data) : UNTAGGABLE;
        if (read === UNTAGGABLE) return;
        tags = read;
        if (cached.status === 'MISS') cache.store(cached.key, { body: JSON.stringify(data), tags, startedAt: cached.startedAt }, cached.ttlMs);
      }
      const headers = response.http.headers;
      headers.set(CACHE_HEADERS.status, cached.status);
      headers.set(CACHE_HEADERS.surrogateKey, tags.join(' '));
      headers.set(CACHE_HEADERS.cacheTag, tags.join(','));
      if (cached.status === 'HIT') headers.set(CACHE_HEADERS.age, String(Math.max(0, Math.floor((Date.now() - cached.startedAt) / 1000))));
    },
  };
  const started = Promise.resolve(listener);
  return { requestDidStart: () => started };
}

/**
 * The key of an answer: the caller's role (what it may see), the document, the operation chosen
 * and the variables as sent. Two spellings of the same value are two keys, never one wrong answer.
 */
function keyOf(caller: Caller | undefined, queryHash: string | undefined, operationName: string | null | undefined, variables: Record<string, unknown> | undefined): string {
  const role = caller?.kind === 'key' ? caller.key.role : 'anonymous';
  return createHash('sha256')
    .update(`${role}\n${queryHash ?? ''}\n${operationName ?? ''}\n`)
    .update(JSON.stringify(variables ?? {}))
    .digest('base64url');
}
