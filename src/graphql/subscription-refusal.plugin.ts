import type { GraphQLRequestContextDidResolveOperation, GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { ApiError } from '../errors';
import type { SharedRequestHooks } from './request-hooks';

const OVER_HTTP = 'Subscriptions are served over WebSocket at /graphql (the graphql-ws protocol) or over Server-Sent Events at /graphql/stream, not over HTTP';

/**
 * A `subscription` sent over HTTP, by GET or POST, is refused with 400 BAD_REQUEST before it runs
 * (docs/contract.md §8), whether or not the schema has subscriptions. One with `@include`/`@skip`
 * at its root, on which graphql-js's validation would throw, reaches Apollo already validated
 * (PreparedDocuments) and is refused here the same way.
 */
export function subscriptionRefusalHooks<TContext extends object>(): SharedRequestHooks<TContext> {
  return {
    async didResolveOperation({ operation }: GraphQLRequestContextDidResolveOperation<TContext>) {
      if (operation?.operation === 'subscription') throw new ApiError('BAD_REQUEST', OVER_HTTP);
    },
    // Apollo answers a GET of any operation but a query with 405 before didResolveOperation.
    async willSendResponse({ operation, response }: GraphQLRequestContextWillSendResponse<TContext>) {
      if (operation?.operation !== 'subscription' || response.http.status !== 405) return;
      const { code, status } = new ApiError('BAD_REQUEST', OVER_HTTP);
      response.http.status = status;
      response.http.headers.delete('allow');
      response.body = { kind: 'single', singleResult: { errors: [{ message: OVER_HTTP, extensions: { code, status } }] } };
    },
  };
}
