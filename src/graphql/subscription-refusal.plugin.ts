import type {
  ApolloServerPlugin,
  GraphQLRequestContextDidResolveOperation,
  GraphQLRequestContextValidationDidStart,
  GraphQLRequestContextWillSendResponse,
} from '@apollo/server';
import type { DocumentNode } from 'graphql';
import { ApiError } from '../errors';
import { withoutConditionalSubscriptionRoots } from './subscription-root';

const OVER_HTTP = 'Subscriptions are served over WebSocket at /graphql (the graphql-ws protocol), not over HTTP';

/**
 * A `subscription` sent over HTTP, by GET or POST, is refused with 400 BAD_REQUEST before it runs
 * (docs/contract.md §8), whether or not the schema has subscriptions.
 */
export function subscriptionRefusalPlugin<TContext extends object>(): ApolloServerPlugin<TContext> {
  const listener = {
    // graphql-js's one-root-field rule throws (a 500) on `@include(if: $var)` at a subscription's
    // root; without those directives the document validates, and is refused below as any
    // subscription is. Only subscriptions' roots change: a query in the document runs as sent.
    // Apollo validates the context's document as it stands after this hook (the field is typed
    // readonly; test/live/subscription-directives.cases.ts fails if that ever changes).
    async validationDidStart(requestContext: GraphQLRequestContextValidationDidStart<TContext>) {
      const document = withoutConditionalSubscriptionRoots(requestContext.document);
      if (document !== requestContext.document) (requestContext as { document: DocumentNode }).document = document;
    },
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
  return { requestDidStart: async () => listener };
}
