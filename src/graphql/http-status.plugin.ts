import type { GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { RequestRefusal } from '../errors';
import { singleResultType } from '../http/media-types';
import type { SharedRequestHooks } from './request-hooks';

/**
 * docs/contract.md §6: a request refused before execution is sent with its error's status; errors
 * raised while executing fields come in a 200 response (a database outage excepted: 503; and a
 * RequestRefusal, which refuses the whole request: its status and headers, such as a 429's
 * Retry-After). Apollo answers some refusals (persisted queries, plugins) with 200 or 500 on its own.
 * The Content-Type is set here too, as Apollo would choose it, so that Apollo does not build a
 * Negotiator for every response.
 */
export function httpStatusHooks<TContext extends object>(): SharedRequestHooks<TContext> {
  return {
    async willSendResponse({ request, response, errors: raised }: GraphQLRequestContextWillSendResponse<TContext>) {
      if (response.body.kind !== 'single') return;
      if (request.http && !response.http.headers.has('content-type')) {
        const type = singleResultType(request.http.headers.get('accept'));
        if (type !== undefined) response.http.headers.set('content-type', type);
      }
      const { data, errors } = response.body.singleResult;
      if (!errors?.length) return;
      const statuses = errors.map((error) => Number(error.extensions?.status));
      if (data === undefined) {
        response.http.status = statuses[0] || 500;
        return;
      }
      const refusal = raised?.map((error) => unwrapResolverError(error)).find((error) => error instanceof RequestRefusal);
      // A 503 (the database away, or busy for the caller's priority) is the status; a refusal's
      // headers, such as its Retry-After, go with whichever status is sent.
      if (statuses.includes(503)) response.http.status = 503;
      else if (refusal) response.http.status = refusal.status;
      if (refusal) for (const [name, value] of Object.entries(refusal.responseHeaders())) response.http.headers.set(name, value);
    },
  };
}
