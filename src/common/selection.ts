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
export function selectedFields(info: GraphQLResolveInfo, path: string[] = [], read: VariablesRead = { variables: false }): Set<string> {
  let level: FieldNode[] = [...info.fieldNodes];
  for (const name of path) level = fieldsOf(level, info, read).filter((field) => field.name.value === name);
  return new Set(fieldsOf(level, info, read).map((field) => field.name.value));
}

/** Set when a selection's @skip or @include was read: what was selected then depends on the variables. */
interface VariablesRead {
  variables: boolean;
}

/**
 * What `derive` makes of the fields selected below the resolver's field (`select(path)` is
 * selectedFields), derived once per field of a parsed document and kept in `memo`: Apollo hands
 * over the same parsed document for the same text, so the same field nodes come back request
 * after request. A field merged from several nodes, or whose selection reads @skip or @include
 * (it then depends on the variables), is derived afresh each time.
 */
export function derivedOnce<T>(memo: WeakMap<FieldNode, T>, info: GraphQLResolveInfo, derive: (select: (path: string[]) => Set<string>) => T): T {
  const node = info.fieldNodes.length === 1 ? info.fieldNodes[0] : undefined;
  const known = node && memo.get(node);
  if (known !== undefined) return known;
  const read: VariablesRead = { variables: false };
  const derived = derive((path) => selectedFields(info, path, read));
  if (node && !read.variables) memo.set(node, derived);
  return derived;
}

function fieldsOf(nodes: readonly FieldNode[], info: GraphQLResolveInfo, read: VariablesRead): FieldNode[] {
  const fields: FieldNode[] = [];
  const visit = (selectionSet: SelectionSetNode | undefined) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.directives?.length) read.variables = true;
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
