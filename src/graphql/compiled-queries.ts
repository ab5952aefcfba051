import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import {
  type DocumentNode,
  type ExecutionResult,
  execute,
  getVariableValues,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import { fragmentsOf } from './fragments';

/**
 * Fields (fragments expanded, each alias apart) an operation may select and still be compiled.
 * Compiling takes about 60 µs a field (a document of 480 fields: 29 ms), which a page's queries
 * repay within a few runs; a larger document runs on graphql-js.
 */
export const MAX_COMPILED_FIELDS = 200;
/** Fields held compiled in all (about 1 KB of heap and 5 KB resident each, with the code), and operations at most: the least recently run go first. */
export const MAX_HELD_FIELDS = 4_000;
export const MAX_COMPILED_QUERIES = 256;
/** Executions of an operation by graphql-js before it is compiled: a document sent once is never compiled. */
export const RUNS_BEFORE_COMPILING = 1;

/** Apollo's gateway, here the schema and its executor (the gateway interface's types, as Apollo exports them). */
type Gateway = ApolloServerOptionsWithGateway<BaseContext>['gateway'];
type GatewayExecutor = NonNullable<Awaited<ReturnType<Gateway['load']>>['executor']>;

/** An operation graphql-jit declined to compile, or too large to: graphql-js runs it every time. */
const NOT_COMPILED = Symbol('not compiled');
type Compiled = { query: CompiledQuery; fields: number } | { query: typeof NOT_COMPILED; fields: number };

export interface CompiledQueries {
  executor: GatewayExecutor;
  /** Operations held compiled now (a metric). */
  held(): number;
}

/**
 * Executes queries by code compiled for their document (graphql-jit), mutations and the rest by
 * graphql-js. graphql-js walks the document again for every field of every item, building a
 * resolve info, a path and an argument object each time; for a page of 50 pets that walk was the
 * largest part of a request's CPU and of its allocation. Compiled code visits the same fields in
 * the same order, calls the same resolvers with the same arguments, and serializes leaves with the
 * same scalars.
 *
 * An operation is compiled on its second execution, when Apollo hands over the same parsed
 * document again (its document cache): a document sent once costs no compilation. A query whose
 * variables graphql-js would refuse, or whose operation Apollo could not pick out, runs on
 * graphql-js, which words the refusal.
 */
export function compileQueries(schema: GraphQLSchema): CompiledQueries {
  const runs = new WeakMap<OperationDefinitionNode, number>();
  const compiled = new LRUCache<OperationDefinitionNode, Compiled>({ max: MAX_COMPILED_QUERIES, maxSize: MAX_HELD_FIELDS, sizeCalculation: ({ fields }) => Math.max(1, fields) });

  const compiledFor = (document: DocumentNode, operation: OperationDefinitionNode, operationName: string | undefined) => {
    const held = compiled.get(operation);
    if (held !== undefined) return held.query;
    const ran = runs.get(operation) ?? 0;
    if (ran < RUNS_BEFORE_COMPILING) {
      runs.set(operation, ran + 1);
      return NOT_COMPILED;
    }
    const fields = selectedFields(document, operation, MAX_COMPILED_FIELDS);
    const made = fields <= MAX_COMPILED_FIELDS ? compileQuery(schema, document, operationName) : undefined;
    const entry: Compiled = made && isCompiledQuery(made) ? { query: made, fields } : { query: NOT_COMPILED, fields: 0 };
    compiled.set(operation, entry);
    return entry.query;
  };

  const executor: GatewayExecutor = async ({ document, operation, operationName, context, request }) => {
    const variables = request.variables ?? {};
    // No operation when the document holds none by the name asked for, or several and none was named: graphql-js words the refusal.
    const query =
      operation?.operation === 'query' && variablesAccepted(schema, operation, variables) ? compiledFor(document, operation, operationName ?? undefined) : NOT_COMPILED;
    // The name asked for, as Apollo gives it to graphql-js: `operationName` is the one it found, if any.
    if (query === NOT_COMPILED) return execute({ schema, document, contextValue: context, variableValues: variables, operationName: request.operationName });
    const result = (await query.query(undefined, context, variables)) as ExecutionResult;
    return result.errors ? { ...result, errors: result.errors.map(asGraphQLError) } : result;
  };
  const held = () => {
    let count = 0;
    for (const { query } of compiled.values()) if (query !== NOT_COMPILED) count += 1;
    return count;
  };
  return { executor, held };
}

/** The executor as Apollo's gateway, with the schema it serves: Apollo then runs its error handling and plugins as for graphql-js's results. */
export function compiledQueriesGateway({ executor }: CompiledQueries, schema: GraphQLSchema): Gateway {
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    load: async () => ({ executor }),
    stop: async () => undefined,
  };
}

/** Whether graphql-js accepts the request's variables for `operation` (an operation without any always does). */
function variablesAccepted(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: Record<string, unknown>): boolean {
  const definitions = operation.variableDefinitions;
  return !definitions?.length || getVariableValues(schema, definitions, variables, { maxErrors: 1 }).errors === undefined;
}

/** The fields `operation` selects, fragments expanded, counted until past `limit`: nested fragments can multiply without end. */
function selectedFields(document: DocumentNode, operation: OperationDefinitionNode, limit: number): number {
  const fragments = fragmentsOf(document);
  const pending: SelectionSetNode[] = [operation.selectionSet];
  let fields = 0;
  for (let set = pending.pop(); set && fields <= limit; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) fields += 1;
      const nested = selection.kind === Kind.FRAGMENT_SPREAD ? fragments[selection.name.value]?.selectionSet : selection.selectionSet;
      if (nested) pending.push(nested);
    }
  }
  return fields;
}

/**
 * graphql-jit's error as graphql-js makes it: graphql-jit leaves `extensions` out unless the
 * resolver's error carried some (Apollo and the error formatter read `extensions.code`), and
 * gives its own errors (a null for a non-null field, a value a scalar cannot serialize) no
 * original error, where graphql-js locates the Error it threw.
 */
function asGraphQLError(error: GraphQLError): GraphQLError {
  const originalError = error.originalError ?? new Error(error.message);
  const made = new GraphQLError(error.message, { path: error.path, originalError, extensions: error.extensions });
  (made as { locations?: GraphQLError['locations'] }).locations = error.locations;
  return made;
}
