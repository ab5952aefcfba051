import { readFileSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { type DefinitionNode, type DocumentNode, type FragmentDefinitionNode, Kind, concatAST, parse, visit } from 'graphql';

/**
 * Documents a real front end of the gateway would hold: one page or action per file. Found from
 * the compiled bench (dist/test/frontend) too, which has no copy of them.
 */
export const DOCUMENTS_DIR = join(__dirname, '..', '..', ...(__dirname.includes(`${sep}dist${sep}`) ? ['..'] : []), 'test', 'frontend', 'documents');

export interface CorpusFile {
  /** The file name, such as pet-list.graphql. */
  file: string;
  source: string;
  document: DocumentNode;
}

export function readCorpus(): CorpusFile[] {
  return readdirSync(DOCUMENTS_DIR)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => {
      const source = readFileSync(join(DOCUMENTS_DIR, file), 'utf8');
      return { file, source, document: parse(source) };
    });
}

/** Every definition of the corpus as one document, as code generators and linters see them. */
export function corpusDocument(): DocumentNode {
  return concatAST(readCorpus().map(({ document }) => document));
}

/** The operation named `name` with the fragments it uses, as a client sends it. */
export function corpusOperation(name: string): DocumentNode {
  const definitions = corpusDocument().definitions;
  const fragments = new Map(
    definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const operation = definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && d.name?.value === name);
  if (!operation) throw new Error(`no operation ${name} in ${DOCUMENTS_DIR}`);
  const used = new Map<string, DefinitionNode>();
  const collect = (definition: DefinitionNode) =>
    visit(definition, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (fragment && !used.has(spread.name.value)) {
          used.set(spread.name.value, fragment);
          collect(fragment);
        }
      },
    });
  collect(operation);
  return { kind: Kind.DOCUMENT, definitions: [operation, ...used.values()] };
}
