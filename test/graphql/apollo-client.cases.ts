import { ApolloClient, CombinedGraphQLErrors, type FieldPolicy, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { filter, firstValueFrom } from 'rxjs';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, setStock } from '../helpers/builders';
import { corpusOperation } from '../frontend/corpus';

let t: TestApp;
let clientKey: string;
beforeAll(async () => {
  t = await startTestApp();
  const dogs = await createCategory(t, 'Dogs');
  const cats = await createCategory(t, 'Cats');
  for (const [name, category] of [['Rex', dogs], ['Milo', cats], ['Bella', dogs]]) await createPet(t, category, name);
  clientKey = (await createApiKey(t, { name: 'web front end', plan: 'PRO' })).key;
});
afterAll(() => t.close());

/** A connection read page by page with fetchMore: each page's `nodes` follow the previous ones. */
const pagedNodes = (keyArgs: string[]): FieldPolicy<{ nodes: unknown[] }> => ({
  keyArgs,
  merge: (existing, incoming, { args }) => (existing && args?.after ? { ...incoming, nodes: [...existing.nodes, ...incoming.nodes] } : incoming),
});

/** A front end's client, set up as docs/front-end-clients.md shows: Apollo Client over fetch, with a normalised cache. */
const frontEnd = (key?: string) =>
  new ApolloClient({
    link: new HttpLink({ uri: `${t.url}/graphql`, headers: key ? { 'X-API-Key': key } : {} }),
    cache: new InMemoryCache({
      typePolicies: {
        // A pet's stock has no id of its own: it is the stock of pet `petId`.
        InventoryItem: { keyFields: ['petId'] },
        Query: { fields: { pets: pagedNodes(['filter']), orders: pagedNodes(['filter']) } },
      },
    }),
  });

const PETS_PAGE = gql`
  query PetsPage($first: Int) {
    pets(first: $first) {
      nodes { id name status category { id name } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

it('loads a page of pets with their categories, normalised by id in the cache', async () => {
  const client = frontEnd();
  const { data } = await client.query<any>({ query: PETS_PAGE, variables: { first: 2 } });
  expect(data?.pets.nodes.map((pet: any) => [pet.name, pet.category.name])).toEqual([
    ['Rex', 'Dogs'],
    ['Milo', 'Cats'],
  ]);
  expect(data?.pets.pageInfo.hasNextPage).toBe(true);
  const cache = client.cache.extract() as Record<string, any>;
  const rexId = data?.pets.nodes[0].id;
  expect(cache[`Pet:${rexId}`]).toMatchObject({ __typename: 'Pet', name: 'Rex', category: { __ref: expect.stringMatching(/^Category:/) } });
  expect(Object.keys(cache).filter((key) => key.startsWith('Category:'))).toHaveLength(2);
});

it('runs a mutation with an API key, and the cache updates the pet it already holds', async () => {
  const admin = frontEnd(t.adminKey);
  const { data } = await admin.query<any>({ query: PETS_PAGE, variables: { first: 1 } });
  const id = data?.pets.nodes[0].id;
  await admin.mutate({
    mutation: gql`mutation Rename($id: ID!) { updatePet(id: $id, input: { name: "Rex II" }) { id name } }`,
    variables: { id },
  });
  const cached = admin.cache.readFragment<{ name: string }>({ id: `Pet:${id}`, fragment: gql`fragment PetName on Pet { name }` });
  expect(cached?.name).toBe('Rex II');
});

it('surfaces errors with their code', async () => {
  const client = frontEnd(clientKey);
  const attempt = client.mutate({ mutation: gql`mutation { createCategory(input: { name: "Ferrets" }) { id } }` });
  await expect(attempt).rejects.toBeInstanceOf(CombinedGraphQLErrors);
  const error = (await attempt.catch((caught: unknown) => caught)) as CombinedGraphQLErrors;
  expect(error.errors[0].extensions).toEqual({ code: 'FORBIDDEN', status: 403 });

  // A 400 response still carries its GraphQL errors through to the client.
  const { error: refused } = await client.query({ query: gql`query { pet(id: "not-an-id") { id } }`, errorPolicy: 'all' });
  expect(CombinedGraphQLErrors.is(refused)).toBe(true);
  expect((refused as CombinedGraphQLErrors).errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', status: 400 });
});

describe('the documents of the front-end corpus', () => {
  const PET_LIST = corpusOperation('PetList');
  const PET_DETAIL = corpusOperation('PetDetail');
  const PLACE_ORDER = corpusOperation('PlaceOrder');
  const CANCEL_ORDER = corpusOperation('CancelOrder');

  it('reads a list page by page with fetchMore, the field policy merging pages in the cache', async () => {
    const birds = await createCategory(t, 'Birds');
    const names = ['Tweety', 'Polly', 'Kiwi', 'Robin', 'Zazu'];
    for (const name of names) await createPet(t, birds, name);
    const client = frontEnd(clientKey);
    const list = client.watchQuery<any>({ query: PET_LIST, variables: { first: 2, filter: { categoryId: birds } } });
    const loaded = (count: number) =>
      firstValueFrom(list.pipe(filter((result) => result.dataState === 'complete' && result.data.pets.nodes.length === count)));

    let page = (await loaded(2)).data.pets;
    expect(page.nodes.map((pet: any) => pet.name)).toEqual(names.slice(0, 2));
    while (page.pageInfo.hasNextPage) {
      await list.fetchMore({ variables: { after: page.pageInfo.endCursor } });
      page = list.getCurrentResult().data.pets;
    }
    expect(page.nodes.map((pet: any) => pet.name)).toEqual(names);
    expect(page.totalCount).toBe(5);
    // Each pet once in the cache, under Pet:<id>, with its category under Category:<id>.
    const cache = client.cache.extract() as Record<string, any>;
    expect(page.nodes.map((pet: any) => cache[`Pet:${pet.id}`]?.name)).toEqual(names);
    expect(cache[`Category:${birds}`]).toMatchObject({ name: 'Birds' });
  });

  it('sends @include and @skip conditions as variables, and gets what they select', async () => {
    const petId = await createPet(t, await createCategory(t, 'Fish'), 'Nemo');
    const client = frontEnd();
    const lean = await client.query<any>({ query: PET_DETAIL, variables: { id: petId, hideStock: true, withKin: false } });
    expect(lean.data.pet).toEqual({
      __typename: 'Pet',
      id: petId,
      name: 'Nemo',
      status: 'AVAILABLE',
      categoryId: expect.any(String),
      category: { __typename: 'Category', id: expect.any(String), name: 'Fish', description: null },
    });
    const full = await client.query<any>({ query: PET_DETAIL, variables: { id: petId, hideStock: false, withKin: true } });
    expect(full.data.pet.inventory).toEqual({ __typename: 'InventoryItem', petId, quantity: 0, status: 'SOLD' });
    expect(full.data.pet.category.pets.nodes).toEqual([{ __typename: 'Pet', id: petId, name: 'Nemo' }]);
  });

  it('keys a pet\'s stock by petId, so an order\'s answer updates the stock every cached page shows', async () => {
    const petId = await createPet(t, await createCategory(t, 'Rabbits'), 'Thumper');
    await setStock(t, petId, 5);
    const client = frontEnd(clientKey);
    const detail = { query: PET_DETAIL, variables: { id: petId } };
    expect((await client.query<any>(detail)).data.pet.inventory.quantity).toBe(5);
    expect(client.cache.identify({ __typename: 'InventoryItem', petId })).toBe(`InventoryItem:{"petId":"${petId}"}`);

    const { data } = await client.mutate<{ placeOrder: { id: string } }>({
      mutation: PLACE_ORDER,
      variables: { input: { petId, quantity: 2 }, idempotencyKey: `checkout-${petId}` },
    });
    const orderId = data!.placeOrder.id;
    // No refetch: the pet page's cached stock is the one the mutation answered.
    const cached = client.readQuery<any>(detail);
    expect(cached?.pet.inventory).toEqual({ __typename: 'InventoryItem', petId, quantity: 3, status: 'AVAILABLE' });
    expect((client.cache.extract() as Record<string, unknown>)[`Order:${orderId}`]).toMatchObject({ quantity: 2, complete: false });

    // Cancelling answers the id; the front end drops the order from its cache.
    await client.mutate({
      mutation: CANCEL_ORDER,
      variables: { id: orderId },
      update: (cache, { data: answer }) => {
        cache.evict({ id: cache.identify({ __typename: 'Order', id: (answer as any).cancelOrder }) });
      },
    });
    expect((client.cache.extract() as Record<string, unknown>)[`Order:${orderId}`]).toBeUndefined();
    const { data: after } = await client.query<any>({ ...detail, fetchPolicy: 'network-only' });
    expect(after?.pet.inventory.quantity).toBe(5);
  });

  it('surfaces a refused order\'s code and status in extensions', async () => {
    const petId = await createPet(t, await createCategory(t, 'Snakes'), 'Kaa');
    const client = frontEnd(clientKey);
    const attempt = client.mutate({ mutation: PLACE_ORDER, variables: { input: { petId, quantity: 1 } } });
    const error = await attempt.catch((caught: unknown) => caught);
    expect(CombinedGraphQLErrors.is(error)).toBe(true);
    expect((error as CombinedGraphQLErrors).errors.map((e) => [e.path, e.extensions])).toEqual([
      [['placeOrder'], { code: 'INSUFFICIENT_STOCK', status: 409 }],
    ]);
  });
});

it('reads the rate-limit headers through the fetch given to HttpLink, as the front-end guide shows', async () => {
  const seen: Headers[] = [];
  const client = new ApolloClient({
    link: new HttpLink({
      uri: `${t.url}/graphql`,
      headers: { 'X-API-Key': clientKey },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        seen.push(response.headers);
        return response;
      },
    }),
    cache: new InMemoryCache(),
  });
  const { data } = await client.query<any>({ query: corpusOperation('Quota') });
  expect(seen).toHaveLength(1);
  expect(Number(seen[0].get('X-RateLimit-Limit'))).toBe(data.rateLimit.limit);
  expect(Number(seen[0].get('X-RateLimit-Remaining'))).toBe(data.rateLimit.remaining);
  // The header counts whole seconds; resetAt is to the millisecond.
  expect(Math.abs(Number(seen[0].get('X-RateLimit-Reset')) * 1000 - Date.parse(data.rateLimit.resetAt))).toBeLessThan(1000);
});
