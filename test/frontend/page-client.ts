import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, ServerError } from '@apollo/client';
import { RetryLink } from '@apollo/client/link/retry';
import http from 'node:http';

/** The answer to each request the server saw, as the browser's network panel would list it. */
export interface Tally {
  statuses: number[];
}

/** The RetryLink of docs/front-end-clients.md: a 429 is tried again once its Retry-After has passed; a ban (403) is not. */
const retryAfter = new RetryLink({
  attempts: { max: 3, retryIf: (error) => ServerError.is(error) && error.statusCode === 429 },
  delay: (_attempt, _operation, error) => 1000 * Number((ServerError.is(error) && error.response.headers.get('Retry-After')) || 1),
});

/**
 * A fresh page of the gateway at `url`: Apollo Client with a normalised cache, as
 * docs/front-end-clients.md sets it up, noting each response's status.
 */
export function pageClient(url: string, tally: Tally, key?: string, onStatus: (status: number) => void = () => {}) {
  const fetchAndNote: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    tally.statuses.push(response.status);
    onStatus(response.status);
    return response;
  };
  return new ApolloClient({
    link: ApolloLink.from([retryAfter, new HttpLink({ uri: `${url}/graphql`, headers: key ? { 'X-API-Key': key } : {}, fetch: fetchAndNote })]),
    cache: new InMemoryCache({ typePolicies: { InventoryItem: { keyFields: ['petId'] } } }),
  });
}

/** A POST of the key to /graphql that has sent its headers and only part of its body, holding an in-flight slot. */
export function bodyOnItsWay(url: string, key: string): http.ClientRequest {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ query: '{ __typename }' });
  const pending = http.request({ hostname, port, method: 'POST', path: '/graphql', headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, 'X-API-Key': key } });
  pending.on('error', () => {}); // destroyed by the test
  pending.write(body.slice(0, 5));
  return pending;
}
