import { COST } from '../../src/common/query-cost';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

/** Issue 12's attack: aliases of a substring-filtered count, each a page and a COUNT scanning every pet. */
const attack = (aliases: number) =>
  `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: pets(first: 1, filter: { nameContains: "q${i}" }) { totalCount }`).join(' ')} }`;
/** What one alias of the attack costs: its page, its count, a scan for each, and no per-item selection. */
const ATTACK_ALIAS_COST = COST.PAGE + COST.COUNT + 2 * COST.SCAN;

let t: TestApp;
let petId: string;
beforeAll(async () => {
  t = await startTestApp();
  petId = await createPet(t, await createCategory(t), 'Rex');
});
afterAll(() => t.close());

const costOf = (result: { body: any }) => result.body.extensions?.cost;

describe('the cost model', () => {
  it.each([
    ['README FirstPets', 'query FirstPets { pets(first: 5, filter: { status: AVAILABLE }) { nodes { id name status category { name } inventory { quantity status } } pageInfo { hasNextPage endCursor } totalCount } }', 90],
    ['README curl', '{ pets(first: 3) { nodes { id name category { name } } } }', 28],
    ['README PetById', '{ pet(id: "1") { id name categoryId status } }', 6],
    ['the bench Q1', '{ pet(id: "1") { id name category { name } } }', 7],
    ['the bench Q2', '{ pets(first: 50) { nodes { id name status category { id name } inventory { quantity } } } }', 560],
    ['a page of 100 with its count', '{ pets(first: 100) { nodes { id name } totalCount } }', 320],
    ['the category menu: each category’s pet count, loaded for all at once', '{ categories(first: 50) { nodes { id name description pets(first: 1) { totalCount } } pageInfo { hasNextPage endCursor } } }', 560],
    ['a name search with its count', '{ pets(first: 20, filter: { nameContains: "rex" }) { nodes { id name } totalCount } }', 120],
    ['900 × __typename', `{ ${Array.from({ length: 900 }, (_, i) => `t${i}: __typename`).join(' ')} }`, 900],
  ])('accepts %s within the limit, reporting its cost', async (_name, query, cost) => {
    const result = await gql(t.url, query);
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
    expect(costOf(result)).toEqual({ requested: cost, limit: 1000 });
  });

  it('refuses issue 12’s 500 aliases with 400 QUERY_TOO_COMPLEX, reporting the cost', async () => {
    const result = await gql(t.url, attack(500));
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(costOf(result)).toEqual({ requested: 500 * ATTACK_ALIAS_COST, limit: 1000 });
  });

  it('admits at most 16 aliases of the attack: 32 statements', async () => {
    const most = Math.floor(1000 / ATTACK_ALIAS_COST);
    expect(most).toBe(16);
    const accepted = await gql(t.url, attack(most));
    expect(accepted.errors).toBeUndefined();
    expect(Object.keys(accepted.data ?? {})).toHaveLength(most);
    const refused = await gql(t.url, attack(most + 1));
    expect(refused.status).toBe(400);
    expect(codes(refused)).toEqual(['QUERY_TOO_COMPLEX']);
  });

  it('charges totalCount once per connection, however it is selected', async () => {
    const direct = await gql(t.url, '{ pets(first: 50) { totalCount } }');
    const throughFragments = await gql(t.url, '{ pets(first: 50) { ...Count } } fragment Count on PetConnection { ... on PetConnection { totalCount } }');
    expect(costOf(direct).requested).toBe(COST.PAGE + COST.COUNT);
    expect(costOf(throughFragments).requested).toBe(COST.PAGE + COST.COUNT);
  });

  it('costs a filter passed in variables by its value, not by the first value seen', async () => {
    const query = 'query($filter: PetFilter) { pets(first: 1, filter: $filter) { totalCount } }';
    const plain = await gql(t.url, query, { filter: { status: 'AVAILABLE' } });
    const scanning = await gql(t.url, query, { filter: { nameContains: 'x' } });
    expect(costOf(plain).requested).toBe(COST.PAGE + COST.COUNT);
    expect(costOf(scanning).requested).toBe(COST.PAGE + COST.COUNT + 2 * COST.SCAN);
  });

  it('weighs lookups through loaders above plain fields', async () => {
    const plain = await gql(t.url, `{ pet(id: "${petId}") { id name } }`);
    const related = await gql(t.url, `{ pet(id: "${petId}") { id name category { name } inventory { quantity } } }`);
    expect(costOf(plain).requested).toBe(COST.LOOKUP + 2);
    expect(costOf(related).requested).toBe(COST.LOOKUP + 2 + 2 * (COST.LOOKUP + 1));
  });
});
