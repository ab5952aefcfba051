import type { ApolloServerPlugin } from '@apollo/server';
import { type DocumentNode, GraphQLError, type GraphQLSchema, Kind, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { ApiError } from '../errors';

/** Deepest field allowed, the root field counting as 1 (API.md §6). */
export const MAX_DEPTH = 10;

/** Refuses, before execution, operations nested deeper than MAX_DEPTH or costlier than `maxCost`. */
export function queryLimitsPlugin<TContext extends object>(schema: GraphQLSchema, maxCost: number): ApolloServerPlugin<TContext> {
  const estimators = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })];
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, request }) {
          if (!operation) return; // Apollo has already refused the request
          const depth = operationDepth(document, operation);
          if (depth > MAX_DEPTH) {
            throw new ApiError('QUERY_TOO_COMPLEX', `Query depth ${depth} exceeds the limit of ${MAX_DEPTH}`);
          }
          const cost = costOf(() =>
            getComplexity({
              schema,
              query: document,
              operationName: operation.name?.value ?? request.operationName ?? undefined,
              variables: request.variables ?? {},
              estimators,
            }),
          );
          if (cost > maxCost) {
            throw new ApiError('QUERY_TOO_COMPLEX', `Query cost ${cost} exceeds the limit of ${maxCost}`);
          }
        },
      };
    },
  };
}

/** Costing coerces the variables first: a variable of the wrong type is the client's mistake. */
function costOf(measure: () => number): number {
  try {
    return measure();
  } catch (error) {
    if (error instanceof GraphQLError) {
      throw error.originalError instanceof ApiError ? error.originalError : new ApiError('BAD_USER_INPUT', error.message);
    }
    throw error;
  }
}

/**
 * The depth of the operation's deepest field. Introspection fields are not counted: tools such as
 * Apollo Sandbox nest `ofType` deeper than any query of ours. Fragments are measured once each.
 */
export function operationDepth(document: DocumentNode, operation: OperationDefinitionNode): number {
  const fragments = new Map(
    document.definitions.flatMap((definition) =>
      definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition.selectionSet] as const] : [],
    ),
  );
  const fragmentDepths = new Map<string, number>();

  const depthOf = (selectionSet: SelectionSetNode): number => {
    let deepest = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) continue;
        deepest = Math.max(deepest, 1 + (selection.selectionSet ? depthOf(selection.selectionSet) : 0));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        deepest = Math.max(deepest, depthOf(selection.selectionSet));
      } else {
        const name = selection.name.value;
        if (!fragmentDepths.has(name)) {
          fragmentDepths.set(name, 0); // validation has already refused cycles
          const fragment = fragments.get(name);
          fragmentDepths.set(name, fragment ? depthOf(fragment) : 0);
        }
        deepest = Math.max(deepest, fragmentDepths.get(name) ?? 0);
      }
    }
    return deepest;
  };
  return depthOf(operation.selectionSet);
}
