import type { ApolloServerPlugin, GraphQLRequestContextValidationDidStart } from '@apollo/server';
import { type DocumentNode, Kind, type SelectionNode, type SelectionSetNode, print, visit } from 'graphql';

/**
 * graphql-js (16.15) gives the rule that checks same-named fields can merge a fixed budget of
 * comparisons, and answers "Validation aborted." past it. The rule compares every pair of
 * selections of one response name, so a document repeating `__typename` 900 times (cost 900,
 * within every limit) runs it out. An exact repeat cannot conflict with its first copy, and
 * conflicts with any other selection exactly as that copy does: validation is given the document
 * without repeats, while costing, execution and Apollo's document cache keep the document as sent.
 */
export function repeatedSelectionsPlugin<TContext extends object>(): ApolloServerPlugin<TContext> {
  const listener = {
    async validationDidStart(requestContext: GraphQLRequestContextValidationDidStart<TContext>) {
      const sent = requestContext.document;
      const unique = withoutRepeatedSelections(sent);
      if (unique === sent) return;
      // Apollo validates the document of the request context between these two hooks.
      const writable = requestContext as { document: DocumentNode };
      writable.document = unique;
      return async () => {
        writable.document = sent;
      };
    },
  };
  return { requestDidStart: async () => listener };
}

/** The document with each selection set's exact repeats left out; the same object when it has none. */
export function withoutRepeatedSelections(document: DocumentNode): DocumentNode {
  return visit(document, {
    SelectionSet: {
      leave(node: SelectionSetNode) {
        if (!mayRepeat(node.selections)) return undefined;
        const seen = new Set<string>();
        const selections = node.selections.filter((selection) => {
          const text = print(selection);
          if (seen.has(text)) return false;
          seen.add(text);
          return true;
        });
        return selections.length === node.selections.length ? undefined : { ...node, selections };
      },
    },
  });
}

/** A cheap first look: selections that differ in response name, fragment or type cannot repeat. */
function mayRepeat(selections: readonly SelectionNode[]): boolean {
  if (selections.length < 2) return false;
  const keys = new Set<string>();
  for (const selection of selections) {
    const key =
      selection.kind === Kind.FIELD
        ? (selection.alias ?? selection.name).value
        : selection.kind === Kind.FRAGMENT_SPREAD
          ? `...${selection.name.value}`
          : `... on ${selection.typeCondition?.name.value ?? ''}`;
    if (keys.has(key)) return true;
    keys.add(key);
  }
  return false;
}
