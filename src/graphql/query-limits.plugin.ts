import type { GraphQLRequest, GraphQLRequestContextDidResolveOperation } from '@apollo/server';
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getVariableValues,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { ApiError } from '../errors';
import { COSTED_ARGUMENTS, type CostedOperation, OperationCost, requestedCost } from './document-cost';
import { fragmentsOf } from './fragments';
import type { SharedRequestHooks } from './request-hooks';

/** Deepest field allowed, the root field counting as 1 (docs/contract.md §6). */
export const MAX_DEPTH = 10;

/** What a parsed operation costs: measured once per operation, per value of the variables costing reads. */
interface OperationLimits {
  depth: number;
  /** The variables passed in `first`, `filter` or a directive's `if`: the only inputs the cost model reads. */
  costVariables: string[];
  /** Per value of those variables: the cost, with what its walk learnt of the selections. */
  costs: Map<string, OperationCost>;
  fragments: Record<string, FragmentDefinitionNode>;
}

/** Cost results kept per operation; more combinations of variables than this are costed afresh. */
const COSTS_PER_OPERATION = 64;

/**
 * Refuses, before execution, operations nested deeper than MAX_DEPTH or costlier than `maxCost`,
 * and tells the client what its operation cost: `extensions.cost { requested actual limit }`,
 * `actual` measured on the data it got. Apollo hands over the same parsed document for the same
 * query text, so the measures are kept with it and most requests cost little to check.
 * `catalogueSize` says how many pets there are now, which prices substring filters.
 */
export function queryLimitsHooks<TContext extends object>(schema: GraphQLSchema, maxCost: number, catalogueSize: () => number): SharedRequestHooks<TContext> {
  const measured = new WeakMap<OperationDefinitionNode, OperationLimits>();
  const limitsOf = (document: DocumentNode, operation: OperationDefinitionNode): OperationLimits => {
    let limits = measured.get(operation);
    if (!limits) {
      limits = { depth: operationDepth(document, operation), costVariables: costVariables(document), costs: new Map(), fragments: fragmentsOf(document) };
      measured.set(operation, limits);
    }
    return limits;
  };
  // Each request's cost, from its check to its response; kept beside the request, not in a listener of its own.
  const costs = new WeakMap<GraphQLRequest, { cost: OperationCost; requested: number; pets: number }>();
  return {
    async didResolveOperation({ document, operation, request }: GraphQLRequestContextDidResolveOperation<TContext>) {
      const { variables } = request;
      if (!operation) return; // Apollo has already refused the request
      const limits = limitsOf(document, operation);
      refuseTooDeep(limits.depth);
      const { coerced, errors } = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {});
      // Nothing runs then: graphql-js refuses the variables itself, each error with its location.
      if (errors) return;
      const costed = { schema, operation, fragments: limits.fragments, variables: coerced };
      const key = limits.costVariables.map((name) => JSON.stringify(variables?.[name])).join();
      let cost = limits.costs.get(key);
      if (cost === undefined) {
        // Kept with the document: only the variables costing reads, however large the others.
        cost = new OperationCost({ ...costed, variables: only(limits.costVariables, costed.variables) });
        if (limits.costs.size < COSTS_PER_OPERATION) limits.costs.set(key, cost);
      }
      const pets = catalogueSize();
      const requested = cost.requested(pets);
      costs.set(request, { cost, requested, pets });
      refuseTooCostly(requested, maxCost);
    },
    // As GitHub's and Shopify's APIs do: the client sees what its query cost, refused or not.
    async willSendResponse({ request, response }) {
      const costed = costs.get(request);
      if (!costed || response.body.kind !== 'single') return;
      const { cost, requested, pets } = costed;
      const result = response.body.singleResult;
      const actual = result.data ? cost.actual(result.data, pets) : 0;
      result.extensions = { ...result.extensions, cost: { requested, actual, limit: maxCost } };
    },
  };
}

/** The variables a document passes in a `first`, `filter` or `if` argument, at any depth of its value. */
function costVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Argument(node) {
      if (!COST_INPUTS.has(node.name.value)) return;
      visit(node.value, {
        Variable(variable) {
          names.add(variable.name.value);
        },
      });
    },
  });
  return [...names];
}

/** What the cost reads: a connection's costed arguments, and the `if` of @skip and @include. */
const COST_INPUTS = new Set([...COSTED_ARGUMENTS, 'if']);

/** The variables named that were given (a missing one is not one given as undefined). */
function only(names: string[], variables: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(names.filter((name) => Object.hasOwn(variables, name)).map((name) => [name, variables[name]]));
}

/** The operation with its variables coerced: a variable of the wrong type is the client's mistake. */
function costedOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  inputs: Record<string, unknown>,
): CostedOperation {
  const { coerced, errors } = getVariableValues(schema, operation.variableDefinitions ?? [], inputs, { maxErrors: 1 });
  if (errors) throw new ApiError('BAD_USER_INPUT', errors[0].message);
  return { schema, operation, fragments, variables: coerced };
}

/**
 * The depth of the operation's deepest field. Introspection fields are not counted: tools such as
 * Apollo Sandbox nest `ofType` deeper than any query of ours. Fragments are measured once each.
 */
export function operationDepth(document: DocumentNode, operation: OperationDefinitionNode): number {
  const fragments = fragmentsOf(document);
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
          const fragment = fragments[name];
          fragmentDepths.set(name, fragment ? depthOf(fragment.selectionSet) : 0);
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
 * subscription over WebSocket, a trusted document at start-up), its substring filters priced over
 * a catalogue of `pets`. Throws QUERY_TOO_COMPLEX or BAD_USER_INPUT.
 */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  limits: { maxCost: number; pets: number },
): void {
  refuseTooDeep(operationDepth(document, operation));
  refuseTooCostly(requestedCost(costedOperation(schema, operation, fragmentsOf(document), variables), limits.pets), limits.maxCost);
}

function refuseTooDeep(depth: number): void {
  if (depth > MAX_DEPTH) throw new ApiError('QUERY_TOO_COMPLEX', `Query depth ${depth} exceeds the limit of ${MAX_DEPTH}`);
}

function refuseTooCostly(cost: number, maxCost: number): void {
  if (cost > maxCost) throw new ApiError('QUERY_TOO_COMPLEX', `Query cost ${cost} exceeds the limit of ${maxCost}`);
}
