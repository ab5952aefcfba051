import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CODEGEN_OUTPUTS, useGeneratedCode } from './generated-code';

const ROOT = join(__dirname, '..', '..');

/**
 * The generated code (generated-code.ts) and a front end's code using it, type-checked by the
 * TypeScript compiler: a program over Apollo Client's types, seconds of CPU, so in `npm run test:slow`.
 */
const generated = useGeneratedCode();

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

beforeAll(() => writeFileSync(join(generated.dir, 'usage.ts'), USAGE));

it('type-checks with the TypeScript compiler, front-end code using it included', () => {
  // In a process of its own: a program over Apollo Client's types takes some hundreds of MB that
  // would otherwise stay with this Jest worker for the rest of its files.
  const files = [...Object.keys(CODEGEN_OUTPUTS), 'usage.ts'].map((file) => join(generated.dir, file));
  const problems = JSON.parse(execFileSync(process.execPath, ['-e', TYPE_CHECK, generated.dir, ...files], { cwd: ROOT, encoding: 'utf8' })) as string[];
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
