import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { countStatements } from '../helpers/statements';

/**
 * A read of pets selects the columns and joins its selection needs (pet-shape.ts): the answers
 * stay those of a read of every column, however the selection is written.
 */
let t: TestApp;
let dogs: string;
let rex: string;
let bella: string;

beforeAll(async () => {
  t = await startTestApp();
  dogs = await createCategory(t, 'Dogs', 'Loyal');
  rex = await createPet(t, dogs, 'Rex', 'PENDING');
  bella = await createPet(t, dogs, 'Bella');
});
afterAll(() => t.close());

/** The answer, and the pets statements the document ran (texts). */
async function run(query: string, variables?: Record<string, unknown>) {
  let data: Record<string, any> | null | undefined;
  const statements = await countStatements(async () => {
    const result = await gql(t.url, query, variables);
    expect(result.errors).toBeUndefined();
    data = result.data;
  });
  return { data, pets: statements.filter((text) => text.startsWith('SELECT p.id')) };
}

/** The select list of a pets statement. */
const columnsOf = (text: string) => text.slice('SELECT '.length, text.indexOf(' FROM pets p')).split(', ');

describe('the columns a selection needs', () => {
  it('reads the fields of fragments, inline fragments and aliases, and joins only what is asked', async () => {
    const { data, pets } = await run(
      `query($id: ID!) { pet(id: $id) { ...Named ... on Pet { kind: category { label: name } } again: name } }
       fragment Named on Pet { name }`,
      { id: rex },
    );
    expect(data).toEqual({ pet: { name: 'Rex', kind: { label: 'Dogs' }, again: 'Rex' } });
    expect(pets).toHaveLength(1);
    // One pet reads its category's name by a lookup, not a join.
    expect(columnsOf(pets[0])).toEqual(['p.id', 'p.name', '(SELECT c.name FROM categories c WHERE c.id = p.category_id) AS c_name']);
    expect(pets[0]).not.toContain('inventory_items');
    expect(pets[0]).toMatch(/WHERE p\.id = \$1$/);
  });

  it('leaves out what @skip and @include leave out, by variable', async () => {
    const query = `query($id: ID!, $status: Boolean!, $stock: Boolean!) {
      pet(id: $id) { name status @include(if: $status) inventory @skip(if: $stock) { quantity } category { ... on Category @include(if: $status) { description } } }
    }`;
    const lean = await run(query, { id: rex, status: false, stock: true });
    expect(lean.data).toEqual({ pet: { name: 'Rex', category: {} } });
    expect(columnsOf(lean.pets[0])).toEqual(['p.id', 'p.name']);
    expect(lean.pets[0]).not.toContain('inventory_items');

    const full = await run(query, { id: rex, status: true, stock: false });
    expect(full.data).toEqual({ pet: { name: 'Rex', status: 'PENDING', inventory: { quantity: 0 }, category: { description: 'Loyal' } } });
    expect(columnsOf(full.pets[0])).toEqual([
      'p.id',
      'p.name',
      'p.status',
      '(SELECT c.description FROM categories c WHERE c.id = p.category_id) AS c_description',
      'i.quantity AS i_quantity',
    ]);
  });

  it('answers a page the same through nodes and edges, and a category id from the pet row', async () => {
    const { data, pets } = await run('{ pets(first: 1) { edges { node { category { id } } } nodes { categoryId } } }');
    expect(data).toEqual({ pets: { edges: [{ node: { category: { id: dogs } } }], nodes: [{ categoryId: dogs }] } });
    expect(columnsOf(pets[0])).toEqual(['p.id', 'p.category_id']);
    expect(pets[0]).toMatch(/ORDER BY p\.id ASC LIMIT 2$/);
  });

  it('pages after a cursor the same with the stock joined in as without', async () => {
    const page = (selection: string, after: string | null) =>
      run(`query($after: String) { pets(first: 1, after: $after) { edges { cursor node { id ${selection} } } pageInfo { hasNextPage } } }`, { after });
    const first = await page('', null);
    const cursor = first.data?.pets.edges[0].cursor;
    const bare = await page('', cursor);
    const stocked = await page('inventory { quantity }', cursor);
    expect(stocked.data?.pets.edges.map((edge: any) => edge.node.id)).toEqual(bare.data?.pets.edges.map((edge: any) => edge.node.id));
    expect(stocked.data?.pets.edges).toEqual([{ cursor: expect.any(String), node: { id: bella, inventory: { quantity: 0 } } }]);
    expect(stocked.pets[0]).toContain('p.id > $1 AND i.pet_id > $1');
  });

  it('reads a category’s own pets through a joined category', async () => {
    const { data } = await run(`query($id: ID!) { pet(id: $id) { category { name pets(first: 5) { nodes { name } totalCount } } } }`, { id: bella });
    expect(data).toEqual({ pet: { category: { name: 'Dogs', pets: { nodes: [{ name: 'Rex' }, { name: 'Bella' }], totalCount: 2 } } } });
  });
  it('reads a category’s pages of pets with the columns and joins their nodes ask for', async () => {
    let data: Record<string, any> | null | undefined;
    const statements = await countStatements(async () => {
      const result = await gql(t.url, '{ categories { nodes { pets(first: 2) { nodes { name category { name } } } } } }');
      expect(result.errors).toBeUndefined();
      data = result.data;
    });
    expect(data).toEqual({ categories: { nodes: [{ pets: { nodes: [{ name: 'Rex', category: { name: 'Dogs' } }, { name: 'Bella', category: { name: 'Dogs' } }] } }] } });
    const page = statements.find((text) => text.includes('CROSS JOIN LATERAL'));
    expect(page).toContain('(SELECT p.id, p.name, p.category_id, c.name AS c_name FROM pets p JOIN categories c');
    // categories, then their pets with their category names: no statement for the categories again
    expect(statements).toHaveLength(2);
  });
});

describe('pets by id', () => {
  const SELECTION = '{ id name categoryId status category { id name description } inventory { petId quantity status } }';

  it('reads one id by = $1 and several by ANY, with the same rows', async () => {
    const one = await run(`query($a: ID!) { a: pet(id: $a) ${SELECTION} }`, { a: rex });
    const two = await run(`query($a: ID!, $b: ID!) { a: pet(id: $a) ${SELECTION} b: pet(id: $b) ${SELECTION} }`, { a: rex, b: bella });
    expect(one.pets).toHaveLength(1);
    expect(one.pets[0]).toMatch(/WHERE p\.id = \$1$/);
    expect(two.pets).toHaveLength(1);
    expect(two.pets[0]).toMatch(/WHERE p\.id = ANY\(\$1::bigint\[\]\)$/);
    expect(two.data?.a).toEqual(one.data?.a);
    expect(two.data?.b).toMatchObject({ id: bella, name: 'Bella', status: 'AVAILABLE', category: { id: dogs } });
  });

  it('reads lookups of one tick in one statement selecting what any of them asks', async () => {
    const { data, pets } = await run(`query($a: ID!, $b: ID!) { a: pet(id: $a) { name } b: pet(id: $b) { status } c: pet(id: $a) { status } }`, {
      a: rex,
      b: bella,
    });
    expect(data).toEqual({ a: { name: 'Rex' }, b: { status: 'AVAILABLE' }, c: { status: 'PENDING' } });
    expect(pets).toHaveLength(1);
    expect(columnsOf(pets[0])).toEqual(['p.id', 'p.name', 'p.status']);
  });

  it('answers null for an unknown id in a batch as alone', async () => {
    const { data } = await run(`query($a: ID!) { a: pet(id: $a) { name } b: pet(id: "999999") { name } c: pet(id: "999998") { name } }`, { a: rex });
    expect(data).toEqual({ a: { name: 'Rex' }, b: null, c: null });
  });
});
