import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type GraphQLNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  type GraphQLObjectType,
  isSpecifiedScalarType,
  isIntrospectionType,
} from 'graphql';
import { buildGatewaySchema, printGatewaySchema } from '../../src/graphql/schema';

it('schema.graphql is the schema the server builds (run `npm run schema` after changing a resolver)', async () => {
  const committed = readFileSync(join(__dirname, '..', '..', 'schema.graphql'), 'utf8');
  expect(committed).toBe(printGatewaySchema(await buildGatewaySchema()));
});

it('describes every type, field, argument and enum value', async () => {
  const schema = await buildGatewaySchema();
  const missing: string[] = [];
  const check = (description: string | null | undefined, where: string) => {
    if (!description?.trim()) missing.push(where);
  };
  const ownTypes = Object.values(schema.getTypeMap()).filter(
    (type: GraphQLNamedType) => !isIntrospectionType(type) && (!isSpecifiedScalarType(type) || type.name === 'ID'),
  );
  for (const type of ownTypes) {
    check(type.description, type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        check(field.description, `${type.name}.${field.name}`);
        for (const arg of field.args) check(arg.description, `${type.name}.${field.name}(${arg.name})`);
      }
    }
    if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) check(field.description, `${type.name}.${field.name}`);
    }
    if (isEnumType(type)) {
      for (const value of type.getValues()) check(value.description, `${type.name}.${value.name}`);
    }
  }
  expect(missing).toEqual([]);
});

it('reads the plain fields of the types served item by item with no per-field wrapper, and keeps the resolvers of the rest', async () => {
  const schema = await buildGatewaySchema();
  const wrapped = (type: string) =>
    Object.values((schema.getType(type) as GraphQLObjectType).getFields())
      .filter((field) => field.resolve)
      .map((field) => field.name);
  // Each of these types' other fields is a stored property: graphql-js's default resolver reads it.
  expect(wrapped('Pet')).toEqual(['category', 'inventory']);
  expect(wrapped('Category')).toEqual(['pets']);
  expect(wrapped('InventoryItem')).toEqual(['pet']);
  expect(wrapped('Order')).toEqual(['pet']);
  expect(wrapped('PetConnection')).toEqual(['totalCount', 'totalCountPrecision']);
  expect(wrapped('PetEdge')).toEqual([]);
  expect(wrapped('PageInfo')).toEqual([]);
  // Types left as they were: every field through TypeGraphQL's wrapper.
  expect(wrapped('ApiKey').length).toBe(Object.keys((schema.getType('ApiKey') as GraphQLObjectType).getFields()).length);
});

it('calls a resolver method directly only where TypeGraphQL would neither check, limit nor convert anything', async () => {
  const schema = await buildGatewaySchema();
  const direct = (type: string, field: string) => (schema.getType(type) as GraphQLObjectType).getFields()[field].resolve?.name === 'direct';
  // Root, context, info and scalar arguments only: read as graphql-js hands them over.
  expect([direct('Pet', 'category'), direct('Pet', 'inventory'), direct('Query', 'pet'), direct('Order', 'pet')]).toEqual([true, true, true, true]);
  // An auth check (@Authorized), a field limit (middleware), arguments converted and validated: TypeGraphQL's wrapper.
  expect([direct('Mutation', 'createPet'), direct('Mutation', 'placeOrder'), direct('Query', 'pets'), direct('Category', 'pets')]).toEqual([false, false, false, false]);
});
