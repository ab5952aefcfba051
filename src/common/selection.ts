import { type FieldNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';

/**
 * The names of the fields selected below the resolver's field, along `path` (such as
 * ['edges', 'node']), through fragments and inline fragments: what a resolver needs to decide,
 * ahead of execution, which relations to join into its query.
 */
export function selectedFields(info: GraphQLResolveInfo, path: string[] = []): Set<string> {
  let level: FieldNode[] = [...info.fieldNodes];
  for (const name of path) level = fieldsOf(level, info).filter((field) => field.name.value === name);
  return new Set(fieldsOf(level, info).map((field) => field.name.value));
}

function fieldsOf(nodes: readonly FieldNode[], info: GraphQLResolveInfo): FieldNode[] {
  const fields: FieldNode[] = [];
  const visit = (selectionSet: SelectionSetNode | undefined) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else visit(info.fragments[selection.name.value]?.selectionSet);
    }
  };
  for (const node of nodes) visit(node.selectionSet);
  return fields;
}
