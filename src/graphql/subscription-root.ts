import {
  type ASTNode,
  type DocumentNode,
  type FieldNode,
  type FragmentSpreadNode,
  type InlineFragmentNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { fragmentsOf } from './fragments';

type RootSelection = FieldNode | InlineFragmentNode | FragmentSpreadNode;

const CONDITIONS = new Set(['include', 'skip']);
const isConditional = (node: RootSelection) => (node.directives ?? []).some((directive) => CONDITIONS.has(directive.name.value));

/**
 * The selections at the root of a subscription operation that carry `@include` or `@skip`,
 * through inline fragments and fragment spreads. graphql-js 16's one-root-field rule evaluates
 * those directives without variable values and throws on `if: $var`; the GraphQL specification
 * (and graphql-js 17) forbids them there, since a subscription must always have its one field.
 */
function conditionalRootSelections(document: DocumentNode, operation: OperationDefinitionNode): Set<ASTNode> {
  const fragments = fragmentsOf(document);
  const found = new Set<ASTNode>();
  const seen = new Set<string>();
  const walk = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (isConditional(selection)) found.add(selection);
      if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet);
      if (selection.kind === Kind.FRAGMENT_SPREAD && !seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments[selection.name.value];
        if (fragment) walk(fragment.selectionSet);
      }
    }
  };
  walk(operation.selectionSet);
  return found;
}

/** Why a subscription operation's root may not run, or undefined when it may. */
export function conditionalRootField(document: DocumentNode, operation: OperationDefinitionNode): string | undefined {
  if (operation.operation !== 'subscription' || conditionalRootSelections(document, operation).size === 0) return undefined;
  const name = operation.name ? `Subscription "${operation.name.value}"` : 'An anonymous subscription';
  return `${name} must not use @skip or @include in its top-level selection: a subscription always has its one root field`;
}

/**
 * The document with `@include`/`@skip` taken off the roots of its subscription operations (and
 * nothing else), so that validating it cannot throw. For a document that is refused as a
 * subscription whatever it holds, never for one that runs.
 */
export function withoutConditionalSubscriptionRoots(document: DocumentNode): DocumentNode {
  const conditional = new Set<ASTNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION && definition.operation === 'subscription') {
      conditionalRootSelections(document, definition).forEach((node) => conditional.add(node));
    }
  }
  if (conditional.size === 0) return document;
  const unconditional = (node: RootSelection) =>
    conditional.has(node) ? { ...node, directives: node.directives?.filter((directive) => !CONDITIONS.has(directive.name.value)) } : undefined;
  const stripped = visit(document, { Field: unconditional, InlineFragment: unconditional, FragmentSpread: unconditional });
  // A variable that only chose the root field is now unused, which validation would name instead.
  const used = new Set<string>();
  visit(stripped, { VariableDefinition: () => false, Variable: (node) => void used.add(node.name.value) });
  return visit(stripped, {
    OperationDefinition: (node) =>
      node.operation === 'subscription'
        ? { ...node, variableDefinitions: node.variableDefinitions?.filter((definition) => used.has(definition.variable.name.value)) }
        : undefined,
  });
}
