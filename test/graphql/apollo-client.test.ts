import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';

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

/** A front end's client: Apollo Client over fetch, with a normalised cache. */
const frontEnd = (key?: string) =>
  new ApolloClient({
    link: new HttpLink({ uri: `${t.url}/graphql`, headers: key ? { 'X-API-Key': key } : {} }),
    cache: new InMemoryCache(),
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
