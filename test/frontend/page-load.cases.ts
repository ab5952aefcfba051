import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, ServerError } from '@apollo/client';
import { RetryLink } from '@apollo/client/link/retry';
import http from 'node:http';
import request from 'supertest';
import { startTestApp, type TestApp, DATABASE_BOUND } from '../helpers/app';
import { holdPets } from '../helpers/hold';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { waitFor } from '../helpers/wait';
import { corpusOperation } from './corpus';
import { printFigure } from '../helpers/figures';
import { PLAN_LIMITS, Plan } from '../../src/auth/plans';

const max = PLAN_LIMITS[Plan.FREE].requestsInFlight;

/**
 * A front end as browsers run it: Apollo Client firing a page's queries at once when the page
 * mounts, the page reloaded. None of it may be refused, and nobody may be banned for it.
 */
let t: TestApp;
let petIds: string[];
beforeAll(async () => {
  t = await startTestApp(DATABASE_BOUND);
  const dogs = await createCategory(t, 'Dogs');
  const cats = await createCategory(t, 'Cats');
  petIds = [];
  for (const [name, category] of [['Rex', dogs], ['Milo', cats], ['Bella', dogs], ['Luna', cats]]) petIds.push(await createPet(t, category, name));
});
afterAll(() => t.close());

/** The answer to each request the server saw, as the browser's network panel would list it. */
interface Tally {
  statuses: number[];
}

/** The RetryLink of docs/front-end-clients.md: a 429 is tried again once its Retry-After has passed; a ban (403) is not. */
const retryAfter = new RetryLink({
  attempts: { max: 3, retryIf: (error) => ServerError.is(error) && error.statusCode === 429 },
  delay: (_attempt, _operation, error) => 1000 * Number((ServerError.is(error) && error.response.headers.get('Retry-After')) || 1),
});

/** A fresh page: Apollo Client with a normalised cache, as docs/front-end-clients.md sets it up, noting each response's status. */
function page(tally: Tally, key?: string, onStatus: (status: number) => void = () => {}) {
  const fetchAndNote: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    tally.statuses.push(response.status);
    onStatus(response.status);
    return response;
  };
  return new ApolloClient({
    link: ApolloLink.from([retryAfter, new HttpLink({ uri: `${t.url}/graphql`, headers: key ? { 'X-API-Key': key } : {}, fetch: fetchAndNote })]),
    cache: new InMemoryCache({ typePolicies: { InventoryItem: { keyFields: ['petId'] } } }),
  });
}

/** The catalogue page's 8 queries, all from the front end's corpus, fired together as a page mounts. */
function mountCatalogue(client: ApolloClient) {
  const [rex, milo] = petIds;
  const queries: [string, Record<string, unknown>][] = [
    ['PetList', { first: 20, withStock: true }],
    ['PetList', { first: 100, withStock: true }],
    ['PetList', { first: 10, filter: { status: 'AVAILABLE' } }],
    ['PetList', { first: 10, filter: { nameContains: 'ilo' } }],
    ['CategoryList', { first: 20 }],
    ['PetDetail', { id: rex, withKin: true }],
    ['PetDetail', { id: milo }],
    ['Quota', {}],
  ];
  return Promise.all(queries.map(([name, variables]) => client.query({ query: corpusOperation(name), variables, fetchPolicy: 'network-only' })));
}

/** Requests holding one of their identity's in-flight slots on the instance. */
const running = async () => Number(/^petstore_requests_in_flight\{state="running"\} (\d+)/m.exec((await request(t.url).get('/metrics')).text)?.[1] ?? 0);
const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec((await request(t.url).get('/metrics')).text)?.[1] ?? 0);

it.each([
  ['an anonymous visitor', undefined],
  ['a FREE key', 'FREE'],
] as const)('answers a page of 8 parallel queries, loaded three times within a minute by %s, 24 times with 200', async (_who, plan) => {
  const key = plan ? (await createApiKey(t, { plan })).key : undefined;
  const loads: Tally[] = [];
  for (let load = 0; load < 3; load += 1) {
    const tally: Tally = { statuses: [] };
    const results = await mountCatalogue(page(tally, key));
    expect(results.map((result) => result.error)).toEqual(Array(8).fill(undefined));
    loads.push(tally);
  }
  printFigure(`page of 8 × 3 loads, ${_who}: ${loads.map((load) => load.statuses.join(' ')).join(' | ')}`);
  expect(loads.flatMap((load) => load.statuses)).toEqual(Array(24).fill(200));
  // Nobody was banned: the next request is answered too.
  const after = await request(t.url).post('/graphql').set(key ? { 'X-API-Key': key } : {}).send({ query: '{ __typename }' });
  expect(after.status).toBe(200);
});

it('lets a burst of 40 at once wait for slots rather than refuse it, and bans nobody', async () => {
  const { key } = await createApiKey(t, { plan: 'FREE' });
  const tally: Tally = { statuses: [] };
  const client = page(tally, key);
  await client.query({ query: corpusOperation('Quota'), fetchPolicy: 'network-only' }); // the key's lookup is cached first
  // The test holds the pets table, so that the burst is all in flight at once: 16 run, 24 wait.
  const hold = await holdPets(t);
  const waitsBefore = await metric('petstore_admission_waits_total');
  const burst = Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      client.query({ query: corpusOperation('PetList'), variables: { first: i + 1, withStock: i % 2 === 0 }, fetchPolicy: 'network-only' }),
    ),
  );
  await waitFor(async () => (await metric('petstore_admission_waits_total')) - waitsBefore >= 24, 10_000, '24 requests of the burst waiting for a slot');
  await hold.release();
  const results = await burst;
  const waited = (await metric('petstore_admission_waits_total')) - waitsBefore;
  printFigure(`burst of 40: ${tally.statuses.filter((s) => s === 200).length - 1} answered 200, ${waited} waited for a slot, ${tally.statuses.filter((s) => s !== 200).length} refused`);

  expect(results.map((result) => result.error)).toEqual(Array(40).fill(undefined));
  expect(tally.statuses).toEqual(Array(41).fill(200));
  expect(waited).toBe(24);
});

it('retries a request refused when its wait for a slot ran out, once Retry-After has passed, through the guide’s RetryLink', async () => {
  const { key } = await createApiKey(t, { plan: 'FREE' });
  // Every slot of the key held by a request whose body is still on its way: the next one waits for a slot until its wait runs out.
  const held = Array.from({ length: max }, () => bodyOnItsWay(key));
  await waitFor(async () => (await running()) >= max, 10_000, 'every slot taken');

  const tally: Tally = { statuses: [] };
  let refused: () => void = () => {};
  const firstRefusal = new Promise<void>((resolve) => (refused = resolve));
  const late = page(tally, key, (status) => status === 429 && refused());
  const answer = late.query({ query: corpusOperation('PetDetail'), variables: { id: petIds[0] }, fetchPolicy: 'network-only' });
  await firstRefusal;
  held.forEach((request) => request.destroy());

  expect((await answer).error).toBeUndefined();
  expect(tally.statuses[0]).toBe(429);
  expect(tally.statuses.at(-1)).toBe(200);
});

/** A POST of the key to /graphql that has sent its headers and only part of its body, holding an in-flight slot. */
function bodyOnItsWay(key: string): http.ClientRequest {
  const { hostname, port } = new URL(t.url);
  const body = JSON.stringify({ query: '{ __typename }' });
  const pending = http.request({ hostname, port, method: 'POST', path: '/graphql', headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, 'X-API-Key': key } });
  pending.on('error', () => {}); // destroyed by the test
  pending.write(body.slice(0, 5));
  return pending;
}
