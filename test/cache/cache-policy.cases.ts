import { buildSchema, type GraphQLSchema, getOperationAST, parse } from 'graphql';
import { type CachePolicy, cachePolicyOf } from '../../src/graphql/cache-control';
import { buildGatewaySchema } from '../../src/graphql/schema';

/** What an operation's answer may be kept for, by whom (src/cache/cache-control.ts), over the gateway's own schema. */
let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildGatewaySchema();
});

const policyOf = (text: string, over = schema): CachePolicy => {
  const document = parse(text);
  const operation = getOperationAST(document);
  if (!operation) throw new Error(`no single operation in ${text}`);
  return cachePolicyOf(over, document, operation);
};
const PUBLIC: CachePolicy = { maxAgeSeconds: 60, scope: 'PUBLIC' };

it.each([
  ['a pet', '{ pet(id: "1") { id name status categoryId } }'],
  ['a page of pets with category and stock', '{ pets(first: 5) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id category { name } inventory { quantity } } } } }'],
  ['categories and their pets', '{ categories { nodes { id name pets(first: 2) { nodes { name } } } } }'],
  ['stock', '{ inventory(first: 3) { nodes { petId quantity status pet { name } } } inventoryItem(petId: "1") { quantity } }'],
  ['typenames beside fields', '{ __typename pet(id: "1") { __typename id } }'],
  ['fragments, named and inline', 'query { ...Q } fragment Q on Query { pet(id: "1") { ...P ... on Pet { name } } } fragment P on Pet { id category { id } }'],
])('keeps the public catalogue: %s', (_name, text) => {
  expect(policyOf(text)).toEqual(PUBLIC);
});

it.each([
  ['orders', '{ orders { nodes { id } } }'],
  ['an order', '{ order(id: "1") { id } }'],
  ['the caller’s quota', '{ rateLimit { limit remaining } }'],
  ['API keys', '{ apiKeys { nodes { id } } }'],
  ['orders beside pets', '{ pets { nodes { id } } orders { nodes { id } } }'],
  ['orders in a named fragment', 'query { pet(id: "1") { id } ...Mine } fragment Mine on Query { orders { nodes { petId } } }'],
  ['orders in an inline fragment', '{ ... on Query { orders { totalCount } } }'],
  ['orders in a nested fragment', 'query { ...Outer } fragment Outer on Query { pets { nodes { id } } ...Inner } fragment Inner on Query { order(id: "1") { id } }'],
  ['orders skipped by a variable', 'query($no: Boolean = true) { pets { nodes { id } } orders @skip(if: $no) { nodes { id } } }'],
  ['a fragment spread twice, once where it may not be selected', 'query($yes: Boolean = false) { ...Mine @include(if: $yes) pets { nodes { id } } ...Mine } fragment Mine on Query { orders { nodes { id } } }'],
])('makes private an answer selecting a PRIVATE field anywhere: %s', (_name, text) => {
  expect(policyOf(text).scope).toBe('PRIVATE');
});

it.each([
  ['the schema', '{ __schema { queryType { name } } }'],
  ['a type', '{ __type(name: "Pet") { name } }'],
  ['the schema beside pets', '{ pets { nodes { id } } __schema { types { name } } }'],
  ['a typename alone', '{ __typename }'],
])('never keeps introspection: %s', (_name, text) => {
  expect(policyOf(text).maxAgeSeconds).toBe(0);
});

it('never keeps a mutation or a subscription', () => {
  expect(policyOf('mutation { deletePet(id: "1") }')).toEqual({ maxAgeSeconds: 0, scope: 'PRIVATE' });
  expect(policyOf('subscription { inventoryChanged { petId quantity } }').maxAgeSeconds).toBe(0);
});

describe('over a schema of its own', () => {
  const small = buildSchema(`
    directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
    directive @rateLimit(max: Int, window: String) on FIELD_DEFINITION
    enum CacheControlScope { PUBLIC PRIVATE }
    type Query {
      hinted: Thing
      limited: Thing @rateLimit(max: 5, window: "1m")
      short: Thing @cacheControl(maxAge: 5)
      bare: Bare
      count: Int
      hintedCount: Int @cacheControl(maxAge: 30)
    }
    type Thing @cacheControl(maxAge: 60) { id: ID bare: Bare }
    type Bare { id: ID }
  `);

  it('refuses a field with a limit of its own, however hinted', () => {
    expect(policyOf('{ limited { id } }', small).maxAgeSeconds).toBe(0);
    expect(policyOf('{ hinted { id } limited { id } }', small).maxAgeSeconds).toBe(0);
  });

  it('takes the least max-age of the fields selected, a field’s own hint before its type’s', () => {
    expect(policyOf('{ hinted { id } }', small)).toEqual(PUBLIC);
    expect(policyOf('{ hinted { id } short { id } }', small).maxAgeSeconds).toBe(5);
    expect(policyOf('{ hintedCount hinted { id } }', small).maxAgeSeconds).toBe(30);
  });

  it('refuses a root field or an object without a hint', () => {
    expect(policyOf('{ count }', small).maxAgeSeconds).toBe(0);
    expect(policyOf('{ bare { id } }', small).maxAgeSeconds).toBe(0);
    expect(policyOf('{ hinted { bare { id } } }', small).maxAgeSeconds).toBe(0);
  });
});
