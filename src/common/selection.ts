import {
  type FieldNode,
  type GraphQLResolveInfo,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getDirectiveValues,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * The names of the fields selected below the resolver's field, along `path` (such as
 * ['edges', 'node']), through fragments and inline fragments, aliases merged, leaving out what
 * @skip or @include leaves out: what a resolver needs to decide, ahead of execution, which
 * columns and relations to read.
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
      if (!included(selection, info)) continue;
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else visit(info.fragments[selection.name.value]?.selectionSet);
    }
  };
  for (const node of nodes) visit(node.selectionSet);
  return fields;
}

/** As graphql-js decides when it collects fields: @skip(if: true) or @include(if: false) leave a selection out. */
function included(selection: SelectionNode, info: GraphQLResolveInfo): boolean {
  if (!selection.directives?.length) return true;
  if (getDirectiveValues(GraphQLSkipDirective, selection, info.variableValues)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, selection, info.variableValues)?.if !== false;
}
