import type { ApolloServerPlugin, GraphQLRequestContextWillSendResponse } from '@apollo/server';

/**
 * docs/contract.md §6: a request refused before execution is sent with its error's status; errors
 * raised while executing fields come in a 200 response (a database outage excepted: 503).
 * Apollo answers some refusals (persisted queries, plugins) with 200 or 500 on its own.
 */
export function httpStatusPlugin<TContext extends object>(): ApolloServerPlugin<TContext> {
  // One listener object for every request: it keeps no state of its own.
  const listener = {
    async willSendResponse({ response }: GraphQLRequestContextWillSendResponse<TContext>) {
      if (response.body.kind !== 'single') return;
      const { data, errors } = response.body.singleResult;
      if (!errors?.length) return;
      const statuses = errors.map((error) => Number(error.extensions?.status));
      if (data === undefined) response.http.status = statuses[0] || 500;
      else if (statuses.includes(503)) response.http.status = 503;
    },
  };
  return { requestDidStart: async () => listener };
}
