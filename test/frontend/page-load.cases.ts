import type { ApolloClient } from '@apollo/client';
import request from 'supertest';
import { startTestApp, type TestApp, DATABASE_BOUND } from '../helpers/app';
import { holdPets } from '../helpers/hold';
import { metric } from '../helpers/metrics';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { waitFor } from '../helpers/wait';
import { corpusOperation } from './corpus';
import { pageClient, type Tally } from './page-client';
import { printFigure } from '../helpers/figures';

/**
 * A front end as browsers run it: Apollo Client firing a page's queries at once when the page
 * mounts, the page reloaded. None of it may be refused, and nobody may be banned for it (a
 * request whose wait for a slot ran out, retried by the guide's RetryLink: retry-after.slow.cases.ts).
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

const page = (tally: Tally, key?: string) => pageClient(t.url, tally, key);

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
  const waitsBefore = await metric(t, 'petstore_admission_waits_total');
  const burst = Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      client.query({ query: corpusOperation('PetList'), variables: { first: i + 1, withStock: i % 2 === 0 }, fetchPolicy: 'network-only' }),
    ),
  );
  await waitFor(async () => (await metric(t, 'petstore_admission_waits_total')) - waitsBefore >= 24, 10_000, '24 requests of the burst waiting for a slot');
  await hold.release();
  const results = await burst;
  const waited = (await metric(t, 'petstore_admission_waits_total')) - waitsBefore;
  printFigure(`burst of 40: ${tally.statuses.filter((s) => s === 200).length - 1} answered 200, ${waited} waited for a slot, ${tally.statuses.filter((s) => s !== 200).length} refused`);

  expect(results.map((result) => result.error)).toEqual(Array(40).fill(undefined));
  expect(tally.statuses).toEqual(Array(41).fill(200));
  expect(waited).toBe(24);
});
