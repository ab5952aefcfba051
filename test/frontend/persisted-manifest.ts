import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DocumentNode, buildSchema, getOperationAST, parse } from 'graphql';
import { readCorpus } from './corpus';

const ROOT = join(__dirname, '..', '..');

export interface GeneratedManifest {
  /** The directory GraphQL Code Generator wrote to; the caller removes it. */
  dir: string;
  /** persisted-documents.json in `dir`: what TRUSTED_DOCUMENTS points at. */
  file: string;
  /** The manifest as written: `{ "sha256:<hex>": "<document>" }`. */
  manifest: Record<string, string>;
}

/**
 * Runs GraphQL Code Generator's client preset with `persistedDocuments: true` over the committed
 * `schema.graphql` and the corpus, as a front end's `codegen.ts` would (docs/front-end-clients.md,
 * "Persisted documents"), and returns the persisted-documents manifest it writes.
 */
/**
 * @graphql-codegen/core, with graphql-tag's warning about a fragment name it has seen before turned
 * off: each generation parses the corpus's fragments again, which is not the clash it warns of.
 */
export async function loadCodegen() {
  (await import('graphql-tag')).disableFragmentWarnings();
  return (await import('@graphql-codegen/core')).codegen;
}

export async function generatePersistedDocuments(): Promise<GeneratedManifest> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-persisted-'));
  const schemaSource = readFileSync(join(ROOT, 'schema.graphql'), 'utf8');
  // Loaded as ES modules, one at a time, as generated-code.ts explains.
  const codegen = await loadCodegen();
  const { addTypenameSelectionDocumentTransform, preset } = await import('@graphql-codegen/client-preset');
  const outputs = await preset.buildGeneratesSection({
    baseOutputDir: `${dir}/`,
    schema: parse(schemaSource),
    schemaAst: buildSchema(schemaSource),
    documents: readCorpus().map(({ file, source, document }) => ({ location: file, rawSDL: source, document })),
    plugins: [],
    pluginMap: {},
    config: { scalars: { DateTime: 'string', ID: 'string' }, strictScalars: true, enumsAsTypes: true, useTypeImports: true },
    presetConfig: { persistedDocuments: true, fragmentMasking: false },
    // Apollo Client's cache needs __typename everywhere; it cannot add it to a document it sends by hash.
    documentTransforms: [{ name: 'addTypenameSelectionDocumentTransform', transformObject: addTypenameSelectionDocumentTransform }],
  });
  // In order: the manifest is complete once graphql.ts, which hashes the documents, is written.
  for (const output of outputs) writeFileSync(output.filename, await codegen(output));
  const file = join(dir, 'persisted-documents.json');
  return { dir, file, manifest: JSON.parse(readFileSync(file, 'utf8')) as Record<string, string> };
}

/** The manifest's id ("sha256:<hex>") and document for the operation named `name`. */
export function manifestEntry(manifest: Record<string, string>, name: string): { id: string; source: string; document: DocumentNode } {
  for (const [id, source] of Object.entries(manifest)) {
    const document = parse(source);
    if (getOperationAST(document)?.name?.value === name) return { id, source, document };
  }
  throw new Error(`no operation ${name} in the manifest`);
}
