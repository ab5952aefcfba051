import type { GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { type DocumentNode, Kind, type SelectionSetNode } from 'graphql';
import type { Caller } from '../auth/caller';
import { cacheControlOf } from '../http/conditional';
import type { SharedRequestHooks } from './request-hooks';

/** Root fields whose answer depends on who asks: the caller's keys, orders and quota. */
const CALLER_FIELDS = new Set(['apiKeys', 'order', 'orders', 'rateLimit']);

/**
 * docs/contract.md §10: says who may keep a query's answer over GET, by its Cache-Control; the
 * GraphQL-over-HTTP adapter then tags it (ETag) and answers a matching If-None-Match with 304.
 * Only a whole answer without errors may be kept. It is `private` when the request carries a key
 * or selects a field answered per caller (an anonymous `rateLimit` is its address's), and
 * otherwise the anonymous catalogue, which any cache may keep and revalidate (`no-cache`).
 */
export function cachePolicyHooks<TContext extends { caller?: Caller }>(): SharedRequestHooks<TContext> {
  return {
    async willSendResponse({ request, response, operation, document, contextValue }: GraphQLRequestContextWillSendResponse<TContext>) {
      if (request.http?.method !== 'GET' || operation?.operation !== 'query' || !document || response.body.kind !== 'single') return;
      const { data, errors } = response.body.singleResult;
      if (errors?.length || !data) return;
      // A context that names no caller cannot be public: only an anonymous one can.
      const personal = contextValue.caller?.kind !== 'anonymous' || selectsCallerField(operation.selectionSet, document);
      response.http.headers.set('cache-control', cacheControlOf(personal ? 'private' : 'public'));
    },
  };
}

/** Whether a root selection, through its fragments, holds a field answered per caller. */
function selectsCallerField(selectionSet: SelectionSetNode, document: DocumentNode, seen = new Set<string>()): boolean {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (CALLER_FIELDS.has(selection.name.value)) return true;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (selectsCallerField(selection.selectionSet, document, seen)) return true;
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = document.definitions.find((definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === selection.name.value);
      if (fragment?.kind === Kind.FRAGMENT_DEFINITION && selectsCallerField(fragment.selectionSet, document, seen)) return true;
    }
  }
  return false;
}
