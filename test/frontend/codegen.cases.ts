import { execFileSync } from 'node:child_process';
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

/** A front end's code using the generated types, right and (marked @ts-expect-error) wrong. */
const USAGE = `
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import {
  PetListDocument, type PetListQuery, type PetListQueryVariables,
  PlaceOrderDocument, type PlaceOrderMutationVariables, type PetCardFragment, type QuotaQuery,
} from './graphql';
import type { Category, Scalars } from './schema';

const client = new ApolloClient({ link: new HttpLink({ uri: '/graphql' }), cache: new InMemoryCache() });

export async function firstNames(variables: PetListQueryVariables): Promise<string[]> {
  const { data } = await client.query({ query: PetListDocument, variables });
  const page: PetListQuery['pets'] | undefined = data?.pets;
  return page?.nodes.map((pet) => pet.name) ?? [];
}

export async function order(petId: string, idempotencyKey: string): Promise<string | undefined> {
  const variables: PlaceOrderMutationVariables = { input: { petId, quantity: 1 }, idempotencyKey };
  const { data } = await client.mutate({ mutation: PlaceOrderDocument, variables });
  const shipDate: string | null | undefined = data?.placeOrder?.shipDate;
  return shipDate ?? undefined;
}

export const card: PetCardFragment = { __typename: 'Pet', id: '1', name: 'Rex', status: 'AVAILABLE', category: { __typename: 'Category', id: '2', name: 'Dogs' } };
export const resetAt = (quota: QuotaQuery): Date => new Date(quota.rateLimit.resetAt);
export const shipped: Scalars['DateTime']['output'] = new Date(0).toISOString();
export const categoryName = (category: Pick<Category, 'name'>): string => category.name;

// @ts-expect-error: a pet's status is one of PetStatus's values
export const lost: PetCardFragment['status'] = 'LOST';
// @ts-expect-error: ids are strings, whatever their digits
export const numericId: PetCardFragment['id'] = 1;
// @ts-expect-error: placeOrder needs its input
export const noInput: PlaceOrderMutationVariables = { idempotencyKey: 'k' };
`;

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
  writeFileSync(join(dir, 'usage.ts'), USAGE);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('generates a typed document and result types for every operation and fragment of the corpus', () => {
  const generated = outputs['graphql.ts'];
  for (const name of ['PetList', 'PetDetail', 'CategoryList', 'MyOrders', 'Quota'])
    expect(generated).toMatch(new RegExp(`export const ${name}Document = .* as unknown as DocumentNode<${name}Query, ${name}QueryVariables>;`));
  for (const name of ['PlaceOrder', 'CancelOrder', 'CreatePet', 'UpdateInventory'])
    expect(generated).toMatch(new RegExp(`export const ${name}Document = .* as unknown as DocumentNode<${name}Mutation, ${name}MutationVariables>;`));
  for (const name of ['PetCard', 'StockBadge', 'OrderLine']) expect(generated).toContain(`export type ${name}Fragment = `);
});

it('maps the custom scalars to strings and keeps the schema descriptions', () => {
  const schemaTypes = outputs['schema.ts'];
  expect(schemaTypes).toContain('DateTime: { input: string; output: string; }');
  expect(schemaTypes).toContain('ID: { input: string; output: string; }');
  expect(schemaTypes).toContain('/** An animal in the catalogue. */\nexport type Pet = {');
  expect(schemaTypes).toContain("/** The animal's name, 1 to 100 characters. */\n  name: Scalars['String']['output'];");
  const operations = outputs['graphql.ts'];
  expect(operations).toContain('/** An order to place for units of one pet. */\nexport type NewOrder = {');
  expect(operations).toContain('shipDate?: string | null | undefined;');
});

it('type-checks with the TypeScript compiler, front-end code using it included', () => {
  // In a process of its own: a program over Apollo Client's types takes some hundreds of MB that
  // would otherwise stay with this Jest worker for the rest of its files.
  const files = [...Object.keys(CODEGEN_OUTPUTS), 'usage.ts'].map((file) => join(dir, file));
  const problems = JSON.parse(execFileSync(process.execPath, ['-e', TYPE_CHECK, dir, ...files], { cwd: ROOT, encoding: 'utf8' })) as string[];
  expect(problems).toEqual([]);
});

/** Type-checks the files named after the folder (argv), printing the problems found as JSON. */
const TYPE_CHECK = `
const ts = require('typescript');
const [dir, ...files] = process.argv.slice(1);
const program = ts.createProgram(files, {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.Node16,
  moduleResolution: ts.ModuleResolutionKind.Node16,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  types: [],
  skipLibCheck: true,
});
const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
  const where = diagnostic.file ? diagnostic.file.fileName.slice(dir.length + 1) + ':' + (diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1) + ' ' : '';
  return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, '\\n');
});
process.stdout.write(JSON.stringify(problems));
`;
