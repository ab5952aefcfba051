import type { ApolloServerPlugin, GraphQLRequestContextDidResolveOperation, GraphQLRequestListener } from '@apollo/server';
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import type { CostContext } from '../common/query-cost';
import { ApiError } from '../errors';

/** Deepest field allowed, the root field counting as 1 (docs/contract.md §6). */
export const MAX_DEPTH = 10;

/** What a parsed operation costs: measured once per operation, per page size where that varies. */
interface OperationLimits {
  depth: number;
  /** The variables passed in `first` or `filter`: the only inputs the cost model reads (connectionCost). */
  costVariables: string[];
  costs: Map<string, number>;
  costContext: CostContext;
}

/** Cost results kept per operation; more page sizes than this are costed afresh. */
const COSTS_PER_OPERATION = 64;

/**
 * Refuses, before execution, operations nested deeper than MAX_DEPTH or costlier than `maxCost`.
 * Apollo hands over the same parsed document for the same query text, so the measures are kept
 * with it and most requests cost nothing to check.
 */
export function queryLimitsPlugin<TContext extends object>(schema: GraphQLSchema, maxCost: number): ApolloServerPlugin<TContext> {
  const measured = new WeakMap<OperationDefinitionNode, OperationLimits>();
  const limitsOf = (document: DocumentNode, operation: OperationDefinitionNode): OperationLimits => {
    let limits = measured.get(operation);
    if (!limits) {
      limits = {
        depth: operationDepth(document, operation),
        costVariables: costVariables(document),
        costs: new Map(),
        costContext: { fragments: fragmentsOf(document) },
      };
      measured.set(operation, limits);
    }
    return limits;
  };
  const checks = (measuredCost: { requested?: number }): GraphQLRequestListener<TContext> => ({
    async didResolveOperation({ document, operation, request }: GraphQLRequestContextDidResolveOperation<TContext>) {
      if (!operation) return; // Apollo has already refused the request
      const limits = limitsOf(document, operation);
      refuseTooDeep(limits.depth);
      const key = limits.costVariables.map((name) => JSON.stringify(request.variables?.[name])).join();
      let cost = limits.costs.get(key);
      if (cost === undefined) {
        cost = measureCost(schema, document, operation, request.variables ?? {}, limits.costContext);
        if (limits.costs.size < COSTS_PER_OPERATION) limits.costs.set(key, cost);
      }
      measuredCost.requested = cost;
      refuseTooCostly(cost, maxCost);
    },
    // As GitHub's and Shopify's APIs do: the client sees what its query cost, refused or not.
    async willSendResponse({ response }) {
      if (measuredCost.requested === undefined || response.body.kind !== 'single') return;
      const result = response.body.singleResult;
      result.extensions = { ...result.extensions, cost: { requested: measuredCost.requested, limit: maxCost } };
    },
  });
  return { requestDidStart: async () => checks({}) };
}

/** The variables a document passes in a `first` or a `filter` argument, at any depth of its value. */
function costVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Argument(node) {
      if (node.name.value !== 'first' && node.name.value !== 'filter') return;
      visit(node.value, {
        Variable(variable) {
          names.add(variable.name.value);
        },
      });
    },
  });
  return [...names];
}

function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  return Object.fromEntries(
    document.definitions.flatMap((definition) => (definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition]] : [])),
  );
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

/**
 * The same depth and cost limits, for an operation that does not pass through Apollo (a
 * subscription over WebSocket). Throws QUERY_TOO_COMPLEX or BAD_USER_INPUT.
 */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  maxCost: number,
): void {
  refuseTooDeep(operationDepth(document, operation));
  refuseTooCostly(measureCost(schema, document, operation, variables, { fragments: fragmentsOf(document) }), maxCost);
}

const ESTIMATORS = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })];

/** The operation's cost under the gateway's model (common/query-cost.ts). */
function measureCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  context: CostContext,
): number {
  return costOf(() =>
    getComplexity({ schema, query: document, operationName: operation.name?.value, variables, estimators: ESTIMATORS, context }),
  );
}

function refuseTooDeep(depth: number): void {
  if (depth > MAX_DEPTH) throw new ApiError('QUERY_TOO_COMPLEX', `Query depth ${depth} exceeds the limit of ${MAX_DEPTH}`);
}

function refuseTooCostly(cost: number, maxCost: number): void {
  if (cost > maxCost) throw new ApiError('QUERY_TOO_COMPLEX', `Query cost ${cost} exceeds the limit of ${maxCost}`);
}
