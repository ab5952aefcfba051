import {
  type GraphQLInputType,
  GraphQLNonNull,
  type GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type OperationDefinitionNode,
  typeFromAST,
} from 'graphql';
import { accepts } from '../../src/graphql/sample-variables';

/**
 * Values for an operation's variables, from their definitions alone, for the oracle to replay a
 * document the suite sends (oracle.cases.ts). Boolean variables are named apart: the oracle gives
 * them every combination. Every other variable has a few values, good and bad: an existing id and
 * the same id with a leading zero; a page size taken and one refused; every value of an enum; one
 * filter per field; a valid value of a custom scalar; and, when it may be null, null and no value
 * at all. The first set has each variable's first value; each further set changes one variable.
 */
export interface VariableValues {
  variableSets: Record<string, unknown>[];
  booleans: string[];
}

/** Left out of a set: the variable is not sent at all. */
const ABSENT = Symbol('absent');

/** Values a custom scalar is offered, in order: the first its parseValue accepts is used. */
const SCALAR_CANDIDATES: unknown[] = ['1', 1, true, new Date(Date.UTC(2030, 0, 1)).toISOString()];

export function variableValues(schema: GraphQLSchema, operation: OperationDefinitionNode, existingId: string): VariableValues {
  const booleans: string[] = [];
  const choices: [name: string, values: unknown[]][] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    // A type the schema does not have: validation refuses the document, whatever is sent.
    if (!type) continue;
    if (getNamedType(type).name === 'Boolean' && !isListType(isNonNullType(type) ? type.ofType : type)) booleans.push(name);
    else choices.push([name, valuesOf(type, existingId)]);
  }
  const base = Object.fromEntries(choices.map(([name, values]) => [name, values[0]]));
  const sets = [base, ...choices.flatMap(([name, values]) => values.slice(1).map((value) => ({ ...base, [name]: value })))];
  return { variableSets: sets.map((set) => Object.fromEntries(Object.entries(set).filter(([, value]) => value !== ABSENT))), booleans };
}

/** The values a variable of `type` is given, the first the one other sets keep. */
function valuesOf(type: GraphQLInputType, existingId: string): unknown[] {
  if (!isNonNullType(type)) return [ABSENT, null, ...valuesOf(new GraphQLNonNull(type), existingId)];
  const inner = type.ofType;
  if (isListType(inner)) return valuesOf(inner.ofType, existingId).filter((value) => value !== ABSENT).map((value) => [value]);
  if (isEnumType(inner)) return inner.getValues().map((value) => value.name);
  if (isInputObjectType(inner)) {
    // Its required fields always; then each optional field alone with its first value.
    const fields = Object.values(inner.getFields());
    const required = Object.fromEntries(fields.filter((field) => isNonNullType(field.type)).map((field) => [field.name, valuesOf(field.type, existingId)[0]]));
    const optional = fields.filter((field) => !isNonNullType(field.type)).map((field) => ({ ...required, [field.name]: valuesOf(new GraphQLNonNull(field.type), existingId)[0] }));
    return [required, ...optional];
  }
  if (isScalarType(inner)) {
    switch (inner.name) {
      case 'ID':
        return [existingId, `0${existingId}`];
      case 'Int':
        // A page size taken, and one its field refuses as it resolves.
        return [2, 101];
      case 'Float':
        return [1.5];
      case 'String':
        return ['e'];
      default:
        return [SCALAR_CANDIDATES.find((candidate) => accepts(() => inner.parseValue(candidate)))];
    }
  }
  return [null];
}
