import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { type GraphQLResult, gql } from '../helpers/gql';
import { countStatements } from '../helpers/statements';

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
  console.log(`50 pets with category and stock: ${statements.length} SQL statements`);
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
