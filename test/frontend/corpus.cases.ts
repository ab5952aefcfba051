import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CriticalityLevel, diff } from '@graphql-inspector/core';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  type GraphQLSchema,
  type IntrospectionQuery,
  Kind,
  buildClientSchema,
  buildSchema,
  getIntrospectionQuery,
  print,
  validate,
} from 'graphql';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { corpusDocument, corpusOperation, readCorpus } from './corpus';

let t: TestApp;
/** The schema the running gateway serves, as a front end's tools read it: by introspection. */
let served: GraphQLSchema;
/** schema.graphql as committed, which front-end teams generate their types from. */
let committed: GraphQLSchema;
beforeAll(async () => {
  t = await startTestApp();
  const introspection = await gql<IntrospectionQuery>(t.url, getIntrospectionQuery());
  served = buildClientSchema(introspection.data!);
  committed = buildSchema(readFileSync(join(__dirname, '..', '..', 'schema.graphql'), 'utf8'));
});
afterAll(() => t.close());

const operations = corpusDocument().definitions.flatMap((definition) =>
  definition.kind === Kind.OPERATION_DEFINITION && definition.name ? [definition.name.value] : [],
);

const messages = (schema: GraphQLSchema, name: string) => validate(schema, corpusOperation(name)).map((error) => error.message);

it('holds the documents of a real front end, each file parsed', () => {
  expect(readCorpus().map(({ file }) => file)).toHaveLength(9);
  expect([...operations].sort()).toEqual([
    'CancelOrder',
    'CategoryList',
    'CreatePet',
    'MyOrders',
    'PetDetail',
    'PetList',
    'PlaceOrder',
    'Quota',
    'UpdateInventory',
  ]);
});

it.each(operations)('%s validates against the served schema and the committed schema.graphql', (name) => {
  expect(messages(served, name)).toEqual([]);
  expect(messages(committed, name)).toEqual([]);
});

it('finds no breaking change between the committed schema.graphql and the served schema', async () => {
  const breaking = (await diff(committed, served)).filter((change) => change.criticality.level === CriticalityLevel.Breaking);
  expect(breaking.map((change) => change.message)).toEqual([]);
});

it('would catch a schema change that breaks a front end: the diff calls it breaking and the corpus fails', async () => {
  // Pet.status removed, as a careless rename would.
  const changed = mapSchema(served, {
    [MapperKind.OBJECT_FIELD]: (field, fieldName, typeName) => (typeName === 'Pet' && fieldName === 'status' ? null : field),
  });
  const breaking = (await diff(served, changed)).filter((change) => change.criticality.level === CriticalityLevel.Breaking);
  expect(breaking.map((change) => change.message)).toEqual(["Field 'status' was removed from object type 'Pet'"]);
  expect(messages(changed, 'PetList')).toEqual(['Cannot query field "status" on type "Pet".']);
});

it('runs every query of the corpus on the gateway within its limits, at the largest page', async () => {
  const { key } = await createApiKey(t, { name: 'shop front', plan: 'PRO' });
  const petId = await createPet(t, await createCategory(t, 'Dogs', 'Loyal'), 'Rex');
  const variables: Record<string, Record<string, unknown>> = {
    PetList: { first: 100, withStock: true, filter: { status: 'AVAILABLE', nameContains: 'Rex' } },
    PetDetail: { id: petId, withKin: true },
    CategoryList: { first: 100 },
    MyOrders: { first: 100 },
    Quota: {},
  };
  for (const [name, values] of Object.entries(variables)) {
    const result = await gql(t.url, print(corpusOperation(name)), values, { key });
    expect([name, result.status, result.errors]).toEqual([name, 200, undefined]);
  }
});
