import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSchema, parse } from 'graphql';
import { readCorpus } from './corpus';
import { loadCodegen } from './persisted-manifest';

const ROOT = join(__dirname, '..', '..');

/** The outputs and configuration the codegen.ts of docs/front-end-clients.md gives GraphQL Code Generator. */
export const CODEGEN_OUTPUTS = {
  // Every type of the schema, with its description: for mocks, forms and helpers.
  'schema.ts': ['typescript'],
  // A typed document and result types per operation and fragment of the documents.
  'graphql.ts': ['typescript-operations', 'typed-document-node'],
};
export const CODEGEN_CONFIG = {
  // The gateway's custom scalars; strictScalars fails the run when a new one is left unmapped.
  scalars: { DateTime: 'string', ID: 'string' },
  strictScalars: true,
  enumsAsTypes: true,
  // Apollo Client adds __typename to every selection; the types say so.
  nonOptionalTypename: true,
  useTypeImports: true,
};

export interface GeneratedCode {
  /** The folder the files were written to, with the project's node_modules linked in (set once the file's hooks ran). */
  readonly dir: string;
  /** Each file's code, by its name in CODEGEN_OUTPUTS. */
  readonly outputs: Record<string, string>;
}

/**
 * Registers the calling file's hooks: GraphQL Code Generator run over the schema and the front
 * end's corpus with the configuration above, its files written to a folder removed after the file.
 * Shared by codegen.cases.ts (what it generates) and codegen-types.slow.cases.ts (the type check).
 */
export function useGeneratedCode(): GeneratedCode {
  let dir: string;
  const outputs: Record<string, string> = {};
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-codegen-'));
    // The generated code imports @apollo/client and graphql as a front end's would, from its node_modules.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const schemaSource = readFileSync(join(ROOT, 'schema.graphql'), 'utf8');
    // Loaded as ES modules: the plugins' CommonJS builds require an ESM-only dependency (auto-bind).
    // One at a time: Jest's module linker trips over concurrent imports sharing modules.
    const codegen = await loadCodegen();
    const pluginMap = {
      typescript: await import('@graphql-codegen/typescript'),
      'typescript-operations': await import('@graphql-codegen/typescript-operations'),
      'typed-document-node': await import('@graphql-codegen/typed-document-node'),
    };
    for (const [file, plugins] of Object.entries(CODEGEN_OUTPUTS)) {
      const code = await codegen({
        filename: join(dir, file),
        schema: parse(schemaSource),
        schemaAst: buildSchema(schemaSource),
        documents: readCorpus().map(({ file: location, document }) => ({ location, document })),
        plugins: plugins.map((name) => ({ [name]: {} })),
        pluginMap,
        config: CODEGEN_CONFIG,
      });
      writeFileSync(join(dir, file), code);
      outputs[file] = code;
    }
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    get dir() {
      return dir;
    },
    outputs,
  };
}
