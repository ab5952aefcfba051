import { GraphQLError, type ValidationRule } from 'graphql';

/** What a client reads when it asks for the schema of a gateway that hides it (docs/contract.md §8). */
export const INTROSPECTION_OFF_MESSAGE =
  'Introspection is turned off on this gateway (GRAPHQL_INTROSPECTION=false, the default when NODE_ENV=production); ' +
  'the schema is published as schema.graphql';

/**
 * Refuses `__schema` and `__type` when GRAPHQL_INTROSPECTION is off. Apollo Server's own rule
 * would tell the client to "pass introspection: true to ApolloServer", a setting no client or
 * operator of this gateway has; this one names the variable that turns it on.
 */
export const noIntrospection: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === '__schema' || node.name.value === '__type') {
      context.reportError(new GraphQLError(INTROSPECTION_OFF_MESSAGE, { nodes: [node] }));
    }
  },
});
