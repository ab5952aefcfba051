import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock } from '../helpers/builders';
import { type GraphQLResult, gql } from '../helpers/gql';
import { countStatements } from '../helpers/statements';
import { printFigure } from '../helpers/figures';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const categories = await Promise.all(['Dogs', 'Cats', 'Birds', 'Fish', 'Reptiles'].map((name) => createCategory(t, name)));
  for (let i = 0; i < 60; i += 1) await createPet(t, categories[i % categories.length], `Pet ${i}`);
});
afterAll(() => t.close());

/** The page joins its categories and stock in: one statement. */
const MAX_STATEMENTS = 1;

it('resolves a 50-pet page with categories and stock in a fixed number of statements', async () => {
  let result: GraphQLResult | undefined;
  const statements = await countStatements(async () => {
    result = await gql(t.url, '{ pets(first: 50) { nodes { id name status category { id name } inventory { quantity status } } } }');
  });
  expect(result?.errors).toBeUndefined();
  expect(result?.data?.pets.nodes).toHaveLength(50);
  expect(result?.data?.pets.nodes.every((pet: any) => pet.category.name && pet.inventory.status)).toBe(true);
  expect(statements.length).toBeLessThanOrEqual(MAX_STATEMENTS);
  printFigure(`50 pets with category and stock: ${statements.length} SQL statements`);
});

it('does not grow with the page size', async () => {
  const counts: number[] = [];
  for (const first of [1, 10, 50, 100]) {
    const statements = await countStatements(() => gql(t.url, `{ pets(first: ${first}) { nodes { category { name } inventory { quantity } } } }`));
    counts.push(statements.length);
  }
  expect(new Set(counts).size).toBe(1);
});

it('batches each category’s pets page into one statement', async () => {
  const statements = await countStatements(async () => {
    const result = await gql(t.url, '{ categories { nodes { name pets(first: 3) { totalCount nodes { name category { name } } } } } }');
    expect(result.errors).toBeUndefined();
    expect(result.data?.categories.nodes).toHaveLength(5);
    expect(result.data?.categories.nodes[0].pets.totalCount).toBe(12);
  });
  // categories page, pets of every category, their counts, their categories
  expect(statements.length).toBeLessThanOrEqual(4);
});

describe('counts', () => {
  it('runs no page statement for a count alone, and one count for aliases counting the same filter', async () => {
    const query = `query($s: String) { ${Array.from({ length: 2 }, (_, i) => `a${i}: pets(first: 1, filter: { nameContains: $s }) { totalCount }`).join(' ')} }`;
    let result: GraphQLResult | undefined;
    const statements = await countStatements(async () => {
      result = await gql(t.url, query, { s: 'Pet 1' });
    });
    expect(result?.errors).toBeUndefined();
    expect(Object.values(result?.data ?? {}).map((pets: any) => pets.totalCount)).toEqual(Array(2).fill(11)); // Pet 1, Pet 10 … Pet 19
    expect(statements).toHaveLength(1);
  });

  it('still reads the page when the selection shows it', async () => {
    const statements = await countStatements(() => gql(t.url, '{ pets(first: 1) { totalCount pageInfo { hasNextPage } } }'));
    expect(statements).toHaveLength(2);
  });
});

describe('aliased root lookups', () => {
  const aliases = (count: number, field: (i: number) => string) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: ${field(i)}`).join(' ')} }`;
  let ids: string[];
  beforeAll(async () => {
    const result = await gql(t.url, '{ pets(first: 60) { nodes { id categoryId } } }');
    ids = result.data?.pets.nodes.map((pet: { id: string }) => pet.id);
  });

  // As many aliases as the cost limit admits (1,000).
  it.each([
    ['pet(id)', 330, (id: string) => `pet(id: "${id}") { name }`],
    ['pet(id) with its category', 140, (id: string) => `pet(id: "${id}") { name category { name } }`],
    ['inventoryItem(petId)', 330, (id: string) => `inventoryItem(petId: "${id}") { quantity }`],
  ])('loads aliased %s fields of one shape in one statement', async (_name, count, field) => {
    let result: GraphQLResult | undefined;
    const statements = await countStatements(async () => {
      result = await gql(t.url, aliases(count, (i) => field(ids[i % ids.length])));
    });
    expect(result?.errors).toBeUndefined();
    expect(Object.values(result?.data ?? {}).every((value) => value !== null)).toBe(true);
    expect(statements).toHaveLength(1);
  });

  it('loads aliased category(id) fields in one statement', async () => {
    const categoryIds = (await gql(t.url, '{ categories { nodes { id } } }')).data?.categories.nodes.map((c: { id: string }) => c.id);
    const statements = await countStatements(async () => {
      const result = await gql(t.url, aliases(100, (i) => `category(id: "${categoryIds[i % categoryIds.length]}") { name }`));
      expect(result.errors).toBeUndefined();
    });
    expect(statements).toHaveLength(1);
  });

  it('loads aliased order(id) fields in one statement, within the caller’s orders', async () => {
    const { key } = await createApiKey(t, { plan: 'PRO' });
    const mine: string[] = [];
    for (const id of ids.slice(0, 4)) await setStock(t, id, 5);
    for (const id of ids.slice(0, 3)) mine.push((await placeOrder(t, key, id, 1)).data?.placeOrder.id);
    const other = (await placeOrder(t, t.adminKey, ids[3], 1)).data?.placeOrder.id;
    let result: GraphQLResult | undefined;
    const statements = await countStatements(async () => {
      result = await gql(t.url, aliases(100, (i) => `order(id: "${[...mine, other][i % 4]}") { id }`), undefined, { key });
    });
    expect(result?.errors).toBeUndefined();
    const answers = Object.values(result?.data ?? {}) as ({ id: string } | null)[];
    expect(answers.filter((order) => order === null)).toHaveLength(25);
    expect(new Set(answers.flatMap((order) => (order ? [order.id] : [])))).toEqual(new Set(mine));
    expect(statements).toHaveLength(1);
  });
});
