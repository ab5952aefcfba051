import {
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  typeFromAST,
} from 'graphql';

/** Values tried, in order, for a scalar: the first its parseValue accepts is used. */
const SCALAR_CANDIDATES: unknown[] = ['1', 1, true, new Date(0).toISOString()];

/**
 * Values for the operation's required variables that have no default, so that its cost can be
 * measured before any client sends it (a trusted document, at start-up). Optional variables are
 * left out: the cost then counts the arguments' own defaults, as for a client that omits them.
 */
export function sampleVariables(schema: GraphQLSchema, operation: OperationDefinitionNode): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (type && isNonNullType(type) && !definition.defaultValue) variables[definition.variable.name.value] = sampleOf(type);
  }
  return variables;
}

function sampleOf(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return sampleOf(type.ofType);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0]?.name;
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields()).filter((field) => isNonNullType(field.type) && field.defaultValue === undefined);
    return Object.fromEntries(fields.map((field) => [field.name, sampleOf(field.type)]));
  }
  if (isScalarType(type)) return SCALAR_CANDIDATES.find((candidate) => accepts(() => type.parseValue(candidate)));
  return null;
}

/** Whether `parse` returns rather than throws: a scalar's parser taking a candidate value. */
export function accepts(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
}
