import { COST, substringCost } from '../../src/common/query-cost';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

/** Issue 12's attack: aliases of a substring-filtered count, each a COUNT scanning every pet. */
const attack = (aliases: number) =>
  `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: pets(first: 1, filter: { nameContains: "${twoLetters(i)}" }) { totalCount }`).join(' ')} }`;
/** A two-letter text of its own for each alias: shorter than a trigram, so each count scans. */
const twoLetters = (i: number) => String.fromCharCode(97 + (i % 26), 97 + (Math.floor(i / 26) % 26));
/**
 * What one alias of the attack costs: its connection, its count, the short substring filter on the
 * count (a count alone reads no page), priced over this file's catalogue of one pet.
 */
const ATTACK_ALIAS_COST = COST.CONNECTION + COST.COUNT + substringCost(1, false);
/** The list view of 100 a front end shows: every scalar, the joined relations, pageInfo and totalCount. */
const LIST_VIEW =
  '{ pets(first: 100) { nodes { id name status category { id name description } inventory { petId quantity status } } pageInfo { hasNextPage endCursor } totalCount } }';

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
    ['README FirstPets', 'query FirstPets { pets(first: 5, filter: { status: AVAILABLE }) { nodes { id name status category { name } inventory { quantity status } } pageInfo { hasNextPage endCursor } totalCount } }', 28],
    ['README curl', '{ pets(first: 3) { nodes { id name category { name } } } }', 8],
    ['docs/api.md PetById', '{ pet(id: "1") { id name categoryId status } }', 2],
    ['the bench Q1', '{ pet(id: "1") { id name category { name } } }', 3],
    ['the bench Q2', '{ pets(first: 50) { nodes { id name status category { id name } inventory { quantity } } } }', 152],
    ['a list view of 100 with everything a list shows', LIST_VIEW, 313],
    ['a page of 100 with its count', '{ pets(first: 100) { nodes { id name } totalCount } }', 112],
    ['the category menu: each category’s pet count, loaded for all at once', '{ categories(first: 50) { nodes { id name description pets(first: 1) { totalCount } } pageInfo { hasNextPage endCursor } } }', 164],
    ['a name search with its count, over one pet', '{ pets(first: 20, filter: { nameContains: "rex" }) { nodes { id name } totalCount } }', 34],
    ['900 × __typename', `{ ${Array.from({ length: 900 }, (_, i) => `t${i}: __typename`).join(' ')} }`, 899],
  ])('accepts %s within the limit, reporting its cost', async (_name, query, cost) => {
    const result = await gql(t.url, query);
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
    expect(costOf(result)).toEqual({ requested: cost, actual: expect.any(Number), limit: 1000 });
    expect(costOf(result).actual).toBeLessThanOrEqual(cost);
  });

  it('refuses issue 12’s 500 aliases with 400 QUERY_TOO_COMPLEX, reporting the cost', async () => {
    const result = await gql(t.url, attack(500));
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(costOf(result)).toEqual({ requested: 500 * ATTACK_ALIAS_COST, actual: 0, limit: 1000 });
  });

  it('admits as many aliases of the attack as the scans of its counts, over this catalogue, fit in the limit', async () => {
    const most = Math.floor(1000 / ATTACK_ALIAS_COST);
    expect(most).toBe(76);
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
    expect(costOf(direct).requested).toBe(COST.CONNECTION + COST.COUNT);
    expect(costOf(throughFragments).requested).toBe(COST.CONNECTION + COST.COUNT);
  });

  it('costs a filter passed in variables by its value, not by the first value seen', async () => {
    const query = 'query($filter: PetFilter) { pets(first: 1, filter: $filter) { totalCount } }';
    const plain = await gql(t.url, query, { filter: { status: 'AVAILABLE' } });
    const scanning = await gql(t.url, query, { filter: { nameContains: 'x' } });
    expect(costOf(plain).requested).toBe(COST.CONNECTION + COST.COUNT);
    expect(costOf(scanning).requested).toBe(COST.CONNECTION + COST.COUNT + substringCost(1, false));
  });

  it('charges a lookup by a statement of its own above a relation joined into its parent’s', async () => {
    const plain = await gql(t.url, `{ pet(id: "${petId}") { id name } }`);
    const joined = await gql(t.url, `{ pet(id: "${petId}") { id name category { name } inventory { quantity } } }`);
    const looked = await gql(t.url, `{ inventoryItem(petId: "${petId}") { quantity pet { name } } }`);
    expect(costOf(plain).requested).toBe(COST.OBJECT + COST.LOOKUP);
    expect(costOf(joined).requested).toBe(COST.OBJECT + COST.LOOKUP + 2 * COST.OBJECT);
    expect(costOf(looked).requested).toBe(2 * (COST.OBJECT + COST.LOOKUP));
  });

  it('charges each mutation its transaction, whatever it answers', async () => {
    const cancels = (count: number) => `mutation { ${Array.from({ length: count }, (_, i) => `c${i}: cancelOrder(id: "${i + 1}")`).join(' ')} }`;
    const one = await gql(t.url, cancels(1));
    expect(costOf(one).requested).toBe(COST.MUTATION);
    const many = await gql(t.url, cancels(100));
    expect(many.status).toBe(400);
    expect(codes(many)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(costOf(many).requested).toBe(100 * COST.MUTATION + 99 * COST.REPEAT);
  });

  it('charges every repeat of a field under another alias, so a page cannot multiply its response', async () => {
    const names = Array.from({ length: 2000 }, (_, i) => `a${i}: name`).join(' ');
    const result = await gql(t.url, `{ pets(first: 100) { nodes { ${names} } } }`);
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(costOf(result).requested).toBe(COST.CONNECTION + 100 * (COST.OBJECT + 1999 * COST.REPEAT));
    // Selecting one field twice under one key is the same field, charged once.
    const same = await gql(t.url, '{ pets(first: 10) { nodes { name name } } }');
    expect(costOf(same).requested).toBe(COST.CONNECTION + 10 * COST.OBJECT);
  });

  it('reports as actual what ran: the items returned, not those asked for, and nothing for skipped fields', async () => {
    const [{ count }] = await t.db.dataSource.query('SELECT count(*)::int AS count FROM pets');
    const result = await gql(t.url, LIST_VIEW);
    expect(costOf(result)).toEqual({ requested: 313, actual: COST.CONNECTION + COST.COUNT + 3 * count + COST.OBJECT, limit: 1000 });

    const query = 'query($stock: Boolean!) { pets(first: 100) { nodes { id inventory @include(if: $stock) { quantity } } totalCount @skip(if: $stock) } }';
    const without = await gql(t.url, query, { stock: false });
    const withStock = await gql(t.url, query, { stock: true });
    expect(costOf(without)).toEqual({ requested: COST.CONNECTION + COST.COUNT + 100, actual: COST.CONNECTION + COST.COUNT + count, limit: 1000 });
    expect(costOf(withStock)).toEqual({ requested: COST.CONNECTION + 200, actual: COST.CONNECTION + 2 * count, limit: 1000 });
  });
});
