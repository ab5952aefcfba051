import type { GraphQLRequestContextWillSendResponse } from '@apollo/server';
import type { GraphQLSchema } from 'graphql';
import type { Caller } from '../auth/caller';
import { operationPolicies } from './cache-control';
import { cacheControlOf, sharedCacheControl } from '../http/conditional';
import type { SharedRequestHooks } from './request-hooks';

/**
 * docs/contract.md §10: says who may keep a query's answer over GET, by its Cache-Control; the
 * GraphQL-over-HTTP adapter then tags it (ETag) and answers a matching If-None-Match with 304.
 * Only a whole answer without errors may be kept. It is `private` when the request carries a key
 * or selects a field answered per caller (a PRIVATE hint: orders, keys, an anonymous `rateLimit`,
 * which is its address's). Otherwise it is the anonymous catalogue: browsers revalidate it
 * (`max-age=0`), shared caches may keep it for its hints' max-age (`s-maxage`), at most
 * `maxAgeSeconds`, purged by its Surrogate-Key (response-cache.plugin.ts).
 */
export function cachePolicyHooks<TContext extends { caller?: Caller }>(schema: GraphQLSchema, maxAgeSeconds: number): SharedRequestHooks<TContext> {
  const policyOf = operationPolicies(schema);
  return {
    async willSendResponse({ request, response, operation, document, contextValue }: GraphQLRequestContextWillSendResponse<TContext>) {
      if (request.http?.method !== 'GET' || operation?.operation !== 'query' || !document || response.body.kind !== 'single') return;
      const { data, errors } = response.body.singleResult;
      if (errors?.length || !data) return;
      const policy = policyOf(document, operation);
      // A context that names no caller cannot be public: only an anonymous one can.
      const personal = contextValue.caller?.kind !== 'anonymous' || policy.scope === 'PRIVATE';
      const keptFor = Math.min(policy.maxAgeSeconds, maxAgeSeconds);
      response.http.headers.set('cache-control', personal ? cacheControlOf('private') : keptFor > 0 ? sharedCacheControl(keptFor) : cacheControlOf('public'));
    },
  };
}
