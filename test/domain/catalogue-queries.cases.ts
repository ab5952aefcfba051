import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

let t: TestApp;
let dogs: string;
let cats: string;
const dogIds: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  dogs = await createCategory(t, 'Dogs', 'Loyal');
  cats = await createCategory(t, 'Cats');
  for (const name of ['Rex', 'Bella', 'Max', 'Rexy', 'Buddy']) dogIds.push(await createPet(t, dogs, name));
  await createPet(t, cats, 'Milo', 'PENDING');
  await createPet(t, cats, 'Nala_100%', 'SOLD');
});
afterAll(() => t.close());

describe('pet(id)', () => {
  it('returns the pet with its category and stock', async () => {
    const result = await gql(t.url, `{ pet(id: "${dogIds[0]}") { id name categoryId status category { id name description } inventory { petId quantity status pet { name } } } }`);
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
    expect(result.data?.pet).toEqual({
      id: dogIds[0],
      name: 'Rex',
      categoryId: dogs,
      status: 'AVAILABLE',
      category: { id: dogs, name: 'Dogs', description: 'Loyal' },
      inventory: { petId: dogIds[0], quantity: 0, status: 'SOLD', pet: { name: 'Rex' } },
    });
  });

  it('returns null for an unknown id, including the largest int64', async () => {
    for (const id of ['999999', '9223372036854775807']) {
      const result = await gql(t.url, 'query($id: ID!) { pet(id: $id) { id } }', { id });
      expect(result.status).toBe(200);
      expect(result.data).toEqual({ pet: null });
    }
  });
});

describe('pets', () => {
  it('pages through every pet in id order with cursors', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const result: any = await gql(
        t.url,
        'query($after: String) { pets(first: 3, after: $after) { edges { cursor node { id } } nodes { id } pageInfo { hasNextPage endCursor } totalCount } }',
        { after },
      );
      const connection = result.data.pets;
      expect(connection.totalCount).toBe(7);
      expect(connection.nodes.map((n: any) => n.id)).toEqual(connection.edges.map((e: any) => e.node.id));
      expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)?.cursor ?? null);
      seen.push(...connection.nodes.map((n: any) => n.id));
      pages += 1;
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(7);
    expect([...seen].sort((a, b) => Number(a) - Number(b))).toEqual(seen);
  });

  it('defaults to 20 per page and ends with an empty page after the last cursor', async () => {
    const all = await gql(t.url, '{ pets { nodes { id } pageInfo { hasNextPage endCursor } } }');
    expect(all.data?.pets.nodes).toHaveLength(7);
    expect(all.data?.pets.pageInfo.hasNextPage).toBe(false);
    const after = await gql(t.url, 'query($after: String) { pets(after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }', {
      after: all.data?.pets.pageInfo.endCursor,
    });
    expect(after.data?.pets).toEqual({ nodes: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it('filters by status, category and a case-insensitive name substring', async () => {
    // Asked apart: a text with no trigram costs a scan a statement, and its page and count do not fit one document.
    const page = 'query($filter: PetFilter) { pets(filter: $filter) { nodes { name } } }';
    const count = 'query($filter: PetFilter) { pets(filter: $filter) { totalCount } }';
    const names = async (filter: object) => {
      const [nodes, total] = await Promise.all([gql(t.url, page, { filter }), gql(t.url, count, { filter })]);
      expect([nodes.errors, total.errors]).toEqual([undefined, undefined]);
      return { nodes: nodes.data?.pets.nodes, totalCount: total.data?.pets.totalCount };
    };
    expect(await names({ status: 'PENDING' })).toEqual({ nodes: [{ name: 'Milo' }], totalCount: 1 });
    expect((await names({ categoryId: cats })).totalCount).toBe(2);
    expect(await names({ nameContains: 'REX' })).toEqual({ nodes: [{ name: 'Rex' }, { name: 'Rexy' }], totalCount: 2 });
    expect(await names({ nameContains: 'rex', categoryId: cats })).toEqual({ nodes: [], totalCount: 0 });
    // LIKE wildcards are taken literally
    expect(await names({ nameContains: '_100%' })).toEqual({ nodes: [{ name: 'Nala_100%' }], totalCount: 1 });
    expect((await names({ nameContains: '%' })).totalCount).toBe(1);
  });

  it.each([[0], [101], [-1]])('refuses first: %p with BAD_USER_INPUT', async (first) => {
    const result = await gql(t.url, 'query($first: Int) { pets(first: $first) { nodes { id } } }', { first });
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    expect(result.errors?.[0].extensions.status).toBe(400);
    expect(result.errors?.[0].message).toMatch(/first must be/);
  });

  it('accepts first: 100', async () => {
    const result = await gql(t.url, '{ pets(first: 100) { nodes { id } } }');
    expect(result.errors).toBeUndefined();
  });

  it.each([['not-a-cursor'], ['aWQ6MA'], ['aWQ6YWJj'], ['']])('refuses the malformed cursor %p', async (after) => {
    const result = await gql(t.url, 'query($after: String) { pets(after: $after) { nodes { id } } }', { after });
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    expect(result.errors?.[0].message).toMatch(/cursor/);
  });
});

describe('categories', () => {
  it('lists categories with their pets as a connection', async () => {
    const result = await gql(
      t.url,
      '{ categories { totalCount nodes { name pets(first: 2) { nodes { name } pageInfo { hasNextPage } totalCount } } } }',
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.categories).toEqual({
      totalCount: 2,
      nodes: [
        { name: 'Dogs', pets: { nodes: [{ name: 'Rex' }, { name: 'Bella' }], pageInfo: { hasNextPage: true }, totalCount: 5 } },
        { name: 'Cats', pets: { nodes: [{ name: 'Milo' }, { name: 'Nala_100%' }], pageInfo: { hasNextPage: false }, totalCount: 2 } },
      ],
    });
  });

  it('pages a category’s pets with its own cursor', async () => {
    const first = await gql(t.url, `{ category(id: "${dogs}") { pets(first: 2) { pageInfo { endCursor } } } }`);
    const cursor = first.data?.category.pets.pageInfo.endCursor;
    const next = await gql(t.url, `query($after: String) { category(id: "${dogs}") { pets(first: 2, after: $after) { nodes { name } } } }`, {
      after: cursor,
    });
    expect(next.data?.category.pets.nodes).toEqual([{ name: 'Max' }, { name: 'Rexy' }]);
  });

  it('returns null for an unknown category', async () => {
    const result = await gql(t.url, '{ category(id: "424242") { id } }');
    expect(result.data).toEqual({ category: null });
  });
});
