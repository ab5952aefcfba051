import { type DocumentNode, type FragmentDefinitionNode, Kind } from 'graphql';

/** The document's fragments by name. */
export function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  return Object.fromEntries(
    document.definitions.flatMap((definition) => (definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition]] : [])),
  );
}
