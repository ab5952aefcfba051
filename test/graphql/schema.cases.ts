import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type GraphQLNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
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
