import { type GraphQLSchema, graphql } from 'graphql';
import { Field, ID, ObjectType, Query, Resolver } from 'type-graphql';
import { buildSchemaOf, printGatewaySchema } from '../../src/graphql/schema';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

let t: TestApp;
let petId: string;
beforeAll(async () => {
  t = await startTestApp();
  petId = await createPet(t, await createCategory(t, 'Dogs'), 'Rex');
});
afterAll(() => t.close());

const SPECIFIED = ['include', 'skip', 'deprecated', 'specifiedBy', 'oneOf'];

it('serves the directives of the GraphQL specification beside its own', async () => {
  const result = await gql(t.url, '{ __schema { directives { name } } }');
  expect(result.status).toBe(200);
  const names = result.data?.__schema.directives.map((directive: { name: string }) => directive.name);
  expect(names).toEqual(expect.arrayContaining([...SPECIFIED, 'stability', 'rateLimit', 'cacheControl']));
  expect(names).toHaveLength(SPECIFIED.length + 3);
});

it('answers the idiom of the issue: { __typename @include(if: true) }', async () => {
  const result = await gql(t.url, '{ __typename @include(if: true) }');
  expect(result.status).toBe(200);
  expect([result.data, result.errors]).toEqual([{ __typename: 'Query' }, undefined]);
});

describe('@include and @skip', () => {
  const PET = `query Pet($id: ID!, $withCategory: Boolean!, $withoutStock: Boolean!) {
    pet(id: $id) {
      name
      status @include(if: true)
      id @skip(if: true)
      category @include(if: $withCategory) { name }
      inventory @skip(if: $withoutStock) { quantity }
      ...Stock @include(if: $withCategory)
      ...Stock @skip(if: $withoutStock)
      ... on Pet @include(if: $withCategory) { categoryId }
      ... @skip(if: $withoutStock) { inventoryStatus: inventory { status } }
      ... @skip(if: false) { alwaysName: name }
    }
  }
  fragment Stock on Pet { stock: inventory { quantity } }`;

  it('keeps what the conditions include, on fields, fragment spreads and inline fragments', async () => {
    const result = await gql(t.url, PET, { id: petId, withCategory: true, withoutStock: false });
    expect(result.status).toBe(200);
    expect(result.data?.pet).toEqual({
      name: 'Rex',
      status: 'AVAILABLE',
      category: { name: 'Dogs' },
      inventory: { quantity: 0 },
      stock: { quantity: 0 },
      categoryId: expect.any(String),
      inventoryStatus: { status: 'SOLD' },
      alwaysName: 'Rex',
    });
  });

  it('leaves out what the conditions exclude, in every position', async () => {
    const result = await gql(t.url, PET, { id: petId, withCategory: false, withoutStock: true });
    expect(result.status).toBe(200);
    expect(result.data?.pet).toEqual({ name: 'Rex', status: 'AVAILABLE', alwaysName: 'Rex' });
  });

  it('reads the columns the conditions of each request select, whichever the same document selected before', async () => {
    // The columns a selection needs are worked out once per document, unless a condition makes
    // them depend on the variables: here the first request leaves the status out, the next asks for it.
    const STATUS = 'query PetStatus($id: ID!, $withStatus: Boolean!) { pet(id: $id) { name ... @include(if: $withStatus) { status } } }';
    for (const withStatus of [false, true, false, true]) {
      const result = await gql(t.url, STATUS, { id: petId, withStatus });
      expect([result.status, result.errors, result.data?.pet]).toEqual([200, undefined, withStatus ? { name: 'Rex', status: 'AVAILABLE' } : { name: 'Rex' }]);
    }
  });

  it('refuses a condition that is not a Boolean with GRAPHQL_VALIDATION_FAILED', async () => {
    const result = await gql(t.url, '{ __typename @include(if: "yes") }');
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });
});

describe('@deprecated', () => {
  @ObjectType({ description: 'A listing with one renamed field.' })
  class Listing {
    @Field(() => ID, { description: 'Unique identifier.' })
    id!: string;

    @Field({ description: 'The title of the listing.' })
    title!: string;

    @Field({ description: 'The old name of `title`.', deprecationReason: 'Use `title`.' })
    name!: string;
  }

  @Resolver(() => Listing)
  class ListingResolver {
    @Query(() => Listing, { description: 'The listing.' })
    listing(): Listing {
      return { id: '1', title: 'Rex', name: 'Rex' };
    }
  }

  let schema: GraphQLSchema;
  beforeAll(async () => {
    // The builder the gateway's schema goes through, on one resolver of its own.
    schema = await buildSchemaOf([ListingResolver]);
  });

  it('marks a field deprecated in the printed schema.graphql', () => {
    expect(printGatewaySchema(schema)).toContain('name: String! @deprecated(reason: "Use `title`.")');
  });

  it('reports the deprecation through introspection, and the field still answers', async () => {
    const result = await graphql({
      schema,
      source: `{
        listing { name title }
        __type(name: "Listing") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } }
      }`,
    });
    expect(result.errors).toBeUndefined();
    expect(result.data?.listing).toEqual({ name: 'Rex', title: 'Rex' });
    expect((result.data?.__type as { fields: unknown[] }).fields).toContainEqual({
      name: 'name',
      isDeprecated: true,
      deprecationReason: 'Use `title`.',
    });
  });
});
