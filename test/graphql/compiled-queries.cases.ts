import { buildSchema, getOperationAST, type GraphQLObjectType, parse } from 'graphql';
import request from 'supertest';
import { compileQueries, MAX_COMPILED_FIELDS } from '../../src/graphql/compiled-queries';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { gql, type GraphQLResult } from '../helpers/gql';

let t: TestApp;
let petId: string;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  const dogs = await createCategory(t, 'Dogs');
  petId = await createPet(t, dogs, 'Rex');
  await createPet(t, dogs, 'Fido');
  ({ key } = await createApiKey(t, { plan: 'PRO' }));
});
afterAll(() => t.close());

const compiledQueries = async () => Number(/^petstore_graphql_compiled_queries (\d+)/m.exec((await request(t.url).get('/metrics')).text)?.[1]);

/** What a client sees of an answer: its status, body and the headers that depend on the result. */
const seen = (result: GraphQLResult) => ({ status: result.status, body: result.body, contentType: result.headers['content-type'], cacheControl: result.headers['cache-control'] });

/**
 * Queries first run by graphql-js, then by the code compiled for them: data, errors (codes,
 * messages, paths, locations), `extensions.cost` and status must not tell the two apart.
 */
const QUERIES: [name: string, query: string, variables?: Record<string, unknown>, options?: { key?: string }][] = [
  ['a page with nested objects', '{ pets(first: 5) { totalCount nodes { id name status categoryId category { id name } inventory { quantity status } } pageInfo { hasNextPage endCursor } } }'],
  ['aliases, fragments and __typename', 'query Aliased { first: pets(first: 1) { nodes { ...Named } } __typename } fragment Named on Pet { __typename label: name id }'],
  ['@include and @skip on variables', 'query Pet($id: ID!, $with: Boolean!) { pet(id: $id) { name category @include(if: $with) { name } inventory @skip(if: $with) { quantity } } }', { with: true }],
  ['@include and @skip, the other way', 'query Pet($id: ID!, $with: Boolean!) { pet(id: $id) { name category @include(if: $with) { name } inventory @skip(if: $with) { quantity } } }', { with: false }],
  ['a pet that does not exist (null)', '{ pet(id: "999999") { id name } }'],
  ['a malformed id (an error with its code and path)', '{ pet(id: "not-a-number") { id name } other: pets(first: 1) { nodes { name } } }'],
  ['a field that needs a key, without one', '{ orders(first: 1) { nodes { id } } pets(first: 1) { nodes { name } } }'],
  ['a field that needs a key, with one', '{ orders(first: 1) { totalCount nodes { id } } rateLimit { limit } }', undefined, { key: 'PRO' }],
  ['an argument out of bounds', '{ pets(first: 100000) { nodes { id } } }'],
  ['introspection', '{ __schema { queryType { name } } __type(name: "Pet") { fields { name } } }'],
];

describe.each(QUERIES)('a query run compiled answers as graphql-js did: %s', (_name, query, variables, options) => {
  it('gives the same answer on every run', async () => {
    const send = () => gql(t.url, query, variables && { id: petId, ...variables }, { key: options?.key && key });
    const first = seen(await send());
    expect(first.status).not.toBe(500);
    // The first run by graphql-js, the next ones by the compiled code.
    for (let run = 0; run < 3; run += 1) expect(seen(await send())).toEqual(first);
  });
});

it('compiles a query on its second run, not its first, and leaves mutations and refused variables to graphql-js', async () => {
  const before = await compiledQueries();
  const query = '{ categories(first: 3) { nodes { name } } }';
  await gql(t.url, query);
  expect(await compiledQueries()).toBe(before);
  await gql(t.url, query);
  expect(await compiledQueries()).toBe(before + 1);

  const mutation = 'mutation { createCategory(input: { name: "Cats" }) { id } }';
  for (let run = 0; run < 2; run += 1) await gql(t.url, mutation, undefined, { key: t.adminKey });
  const refused = 'query Pet($id: ID!) { pet(id: $id) { name } }';
  const answers = [];
  for (let run = 0; run < 3; run += 1) answers.push(seen(await gql(t.url, refused, { id: { not: 'an id' } })));
  expect(answers[0].status).toBe(400);
  expect(answers.slice(1)).toEqual([answers[0], answers[0]]);
  expect(await compiledQueries()).toBe(before + 1);
});

it('leaves a document of more than MAX_COMPILED_FIELDS fields to graphql-js, fragments counted where they are spread', async () => {
  const before = await compiledQueries();
  const aliases = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}${i}: __typename`).join(' ');
  const large = `{ ${aliases(MAX_COMPILED_FIELDS + 1, 'a')} }`;
  const spread = `{ ...Many ...Many } fragment Many on Query { ${aliases(MAX_COMPILED_FIELDS / 2 + 1, 'b')} }`;
  for (const query of [large, large, spread, spread]) expect((await gql(t.url, query)).status).toBe(200);
  expect(await compiledQueries()).toBe(before);
  const small = `{ ${aliases(MAX_COMPILED_FIELDS, 'c')} }`;
  for (const query of [small, small]) expect((await gql(t.url, query)).status).toBe(200);
  expect(await compiledQueries()).toBe(before + 1);
});

it('reports errors as graphql-js does: a resolver that throws, and a null for a non-null field', async () => {
  const schema = buildSchema('type Query { items: [Item!]! nullNamed: [Item!] } type Item { name: String! broken: String }');
  const fields = schema.getQueryType()!.getFields();
  fields.items.resolve = () => [{ name: 'a' }, { name: 'b' }];
  fields.nullNamed.resolve = () => [{ name: 'a' }, { name: null }];
  (schema.getType('Item') as GraphQLObjectType).getFields().broken.resolve = () => {
    throw new Error('no such thing');
  };
  const { executor } = compileQueries(schema);
  for (const [query, errors] of [['{ items { name broken } }', 2], ['{ nullNamed { name } items { name } }', 1]] as const) {
    const document = parse(query);
    const run = () => executor({ document, operation: getOperationAST(document)!, operationName: null, context: {}, request: {} } as never);
    const described = async () => {
      const { data, errors } = await run();
      return { data, errors: errors?.map((error) => ({ ...error.toJSON(), extensions: error.extensions, original: error.originalError?.message })) };
    };
    const byGraphqlJs = await described();
    expect(byGraphqlJs.errors).toHaveLength(errors);
    expect(await described()).toEqual(byGraphqlJs);
  }
});
