import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

/** docs/contract.md §3: a name needs a visible character; invisible format characters trim like white space. */
const INVISIBLE = ['\u200b\u200b', '\u200c', '\u200d \u2060', '\ufeff', ' \u200b\t'];

let t: TestApp;
let categoryId: string;
let petId: string;
beforeAll(async () => {
  t = await startTestApp();
  categoryId = await createCategory(t);
  const created = await gql(t.url, 'mutation($c: ID!) { createPet(input: { name: "Rex", categoryId: $c }) { id } }', { c: categoryId }, { key: t.adminKey });
  petId = created.data!.createPet.id;
});
afterAll(() => t.close());

const NAME_INPUTS: [what: string, mutation: string, variables: () => Record<string, unknown>][] = [
  ['createCategory', 'mutation($name: String!) { createCategory(input: { name: $name }) { id } }', () => ({})],
  ['updateCategory', 'mutation($id: ID!, $name: String!) { updateCategory(id: $id, input: { name: $name }) { id } }', () => ({ id: categoryId })],
  ['createPet', 'mutation($c: ID!, $name: String!) { createPet(input: { name: $name, categoryId: $c }) { id } }', () => ({ c: categoryId })],
  ['updatePet', 'mutation($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { id } }', () => ({ id: petId })],
  ['createApiKey', 'mutation($name: String!) { createApiKey(input: { name: $name, plan: FREE }) { key } }', () => ({})],
];

describe.each(NAME_INPUTS)('%s', (_what, mutation, variables) => {
  // A mutation's field error: HTTP 200, the refusal's own status in extensions (docs/contract.md §6).
  it.each(INVISIBLE.map((name) => [JSON.stringify(name), name]))('refuses the name %s with BAD_USER_INPUT (400)', async (_shown, name) => {
    const result = await gql(t.url, mutation, { ...variables(), name }, { key: t.adminKey });
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    expect(result.errors![0]).toMatchObject({ message: 'name must be 1 to 100 characters after trimming', extensions: { status: 400 } });
    expect(Object.values(result.data ?? {})).toEqual([null]);
  });
});

it('stores a name without the invisible characters around it, and counts only what is left', async () => {
  const result = await gql(t.url, 'mutation($name: String!) { createCategory(input: { name: $name }) { name } }', { name: `\u200b ${'a'.repeat(100)}\ufeff` }, { key: t.adminKey });
  expect(result.status).toBe(200);
  expect(result.data!.createCategory.name).toBe('a'.repeat(100));
});

it('keeps invisible characters inside a name, which has visible ones', async () => {
  const result = await gql(t.url, 'mutation($name: String!) { createCategory(input: { name: $name }) { name } }', { name: 'Cat\u200dDog' }, { key: t.adminKey });
  expect(result.data!.createCategory.name).toBe('Cat\u200dDog');
});
