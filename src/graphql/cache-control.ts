import {
  type ConstDirectiveNode,
  DirectiveLocation,
  type DocumentNode,
  type FragmentDefinitionNode,
  getNamedType,
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLEnumType,
  GraphQLInt,
  type GraphQLObjectType,
  type GraphQLSchema,
  isCompositeType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { fragmentsOf } from './fragments';

/** Apollo's cache-hint scope: PRIVATE answers depend on who asks. */
export const CacheControlScope = new GraphQLEnumType({
  name: 'CacheControlScope',
  description: 'Who may share an answer: PUBLIC, everyone allowed to read it; PRIVATE, only the caller.',
  values: {
    PUBLIC: { description: 'The same for every caller allowed to read it: any cache may keep it.' },
    PRIVATE: { description: 'Depends on who asks: only the caller may keep it.' },
  },
});

/** Apollo Server's `@cacheControl` directive, as its documentation defines it, so that its tools read our hints. */
export const cacheControlDirective = new GraphQLDirective({
  name: 'cacheControl',
  description: 'How long an answer holding this type or field may be kept (seconds), and who may share it.',
  locations: [DirectiveLocation.FIELD_DEFINITION, DirectiveLocation.OBJECT, DirectiveLocation.INTERFACE, DirectiveLocation.UNION],
  args: { maxAge: { type: GraphQLInt }, scope: { type: CacheControlScope }, inheritMaxAge: { type: GraphQLBoolean } },
});

/** What an operation's answer may be kept for, by whom: the least of its fields' hints. */
export interface CachePolicy {
  maxAgeSeconds: number;
  scope: 'PUBLIC' | 'PRIVATE';
}

interface Hint {
  maxAge?: number;
  scope?: 'PUBLIC' | 'PRIVATE';
}

/**
 * The cache policy of an operation, from the schema's hints alone, by Apollo's rules: every root
 * field and every field of an object type needs a hint (its own or its type's), else the answer
 * may not be kept (maxAge 0); a PRIVATE hint anywhere makes it private. Every field that may be
 * selected counts, whatever `@skip`/`@include` decide. Apollo's cache-control plugin learns the
 * same as the fields resolve, at a hook per field of every request; here it is learnt once per
 * operation (policies are kept with the operation by the caller).
 */
export function cachePolicyOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): CachePolicy {
  const root = operation.operation === 'query' ? schema.getQueryType() : undefined;
  if (!root) return { maxAgeSeconds: 0, scope: 'PRIVATE' };
  const policy: CachePolicy = { maxAgeSeconds: Number.POSITIVE_INFINITY, scope: 'PUBLIC' };
  walk(schema, fragmentsOf(document), root, operation.selectionSet, policy, true, new Set());
  if (!Number.isFinite(policy.maxAgeSeconds)) policy.maxAgeSeconds = 0;
  return policy;
}

/** cachePolicyOf, learnt once per parsed operation (Apollo hands over the same one for the same text). */
export function operationPolicies(schema: GraphQLSchema): (document: DocumentNode, operation: OperationDefinitionNode) => CachePolicy {
  const policies = new WeakMap<OperationDefinitionNode, CachePolicy>();
  return (document, operation) => {
    let policy = policies.get(operation);
    if (!policy) policies.set(operation, (policy = cachePolicyOf(schema, document, operation)));
    return policy;
  };
}

function walk(
  schema: GraphQLSchema,
  fragments: Record<string, FragmentDefinitionNode>,
  parent: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  policy: CachePolicy,
  atRoot: boolean,
  spread: Set<string>,
): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name === '__typename') continue;
      const field = parent.getFields()[name];
      // Introspection, or a field validation would have refused: never kept.
      if (!field) {
        policy.maxAgeSeconds = 0;
        continue;
      }
      const type = getNamedType(field.type);
      // A field with a limit of its own counts each call: never answered without running.
      if (field.astNode?.directives?.some((directive) => directive.name.value === 'rateLimit')) policy.maxAgeSeconds = 0;
      const hint = hintOf(field.astNode?.directives) ?? (isCompositeType(type) ? hintOf(type.astNode?.directives) : undefined);
      if (hint?.scope === 'PRIVATE') policy.scope = 'PRIVATE';
      if (atRoot || isCompositeType(type)) policy.maxAgeSeconds = Math.min(policy.maxAgeSeconds, hint?.maxAge ?? 0);
      if (selection.selectionSet && isObjectType(type)) walk(schema, fragments, type, selection.selectionSet, policy, false, spread);
      else if (selection.selectionSet) policy.maxAgeSeconds = 0;
    } else {
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragments[selection.name.value] : selection;
      if (selection.kind === Kind.FRAGMENT_SPREAD && (spread.has(selection.name.value) || !fragment)) continue;
      if (selection.kind === Kind.FRAGMENT_SPREAD) spread.add(selection.name.value);
      const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : parent;
      if (isObjectType(condition)) walk(schema, fragments, condition, fragment.selectionSet, policy, atRoot, spread);
      else policy.maxAgeSeconds = 0;
    }
  }
}

function hintOf(directives: readonly ConstDirectiveNode[] | undefined): Hint | undefined {
  const directive = directives?.find((one) => one.name.value === 'cacheControl');
  if (!directive) return undefined;
  const hint: Hint = {};
  for (const argument of directive.arguments ?? []) {
    if (argument.name.value === 'maxAge' && argument.value.kind === Kind.INT) hint.maxAge = Number(argument.value.value);
    if (argument.name.value === 'scope' && argument.value.kind === Kind.ENUM) hint.scope = argument.value.value === 'PRIVATE' ? 'PRIVATE' : 'PUBLIC';
  }
  return hint;
}
