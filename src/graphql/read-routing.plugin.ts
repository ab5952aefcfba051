import type { Context } from '../context';
import { READ_AFTER_HEADER } from '../sql/read-your-writes';
import type { SharedRequestHooks } from './request-hooks';

/**
 * Read replicas (DATABASE_READ_URLS; docs/contract.md "Read replicas"): once a document is known
 * to be a query, its reads go to a replica that has seen the caller's writes; a mutation, every
 * read inside it included, stays on the primary, and its answer carries the position the primary
 * had reached after it (X-Read-After, and a cookie for browsers), which the gateway also
 * remembers for the caller. Without
 * replicas the request has no `reads`, and this does nothing.
 */
export function readRoutingHooks(): SharedRequestHooks<Context> {
  return {
    async didResolveOperation({ contextValue, operation }) {
      if (operation?.operation === 'query') await contextValue.services?.reads?.readFromReplica();
    },
    async willSendResponse({ contextValue, operation, response }) {
      if (operation?.operation !== 'mutation') return;
      const reads = contextValue.services?.reads;
      const position = await reads?.recordWrite();
      if (reads === undefined || position === undefined) return;
      response.http.headers.set(READ_AFTER_HEADER.toLowerCase(), position);
      response.http.headers.set('set-cookie', reads.cookieOf(position));
    },
  };
}
