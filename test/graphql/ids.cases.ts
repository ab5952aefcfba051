import { startTestApp, type TestApp } from '../helpers/app';
import { codes, gql } from '../helpers/gql';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const BAD_IDS = ['abc', '-1', '0', '1.5', '9223372036854775808', '', ' 1', '1e3', '0x10', '99999999999999999999'];

describe('malformed ids are refused before execution with 400 BAD_USER_INPUT', () => {
  it.each(BAD_IDS)('as a variable: %p', async (id) => {
    const result = await gql(t.url, 'query($id: ID!) { pet(id: $id) { id } }', { id });
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    expect(result.errors?.[0].extensions.status).toBe(400);
    expect(result.data).toBeUndefined();
  });

  it.each(BAD_IDS)('as a literal: %p', async (id) => {
    const result = await gql(t.url, `{ category(id: ${JSON.stringify(id)}) { id } }`);
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
  });

  it.each([[-1], [1.5], [true], [[1]], [{}]])('of another JSON type: %p', async (id) => {
    const result = await gql(t.url, 'query($id: ID!) { pet(id: $id) { id } }', { id });
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
  });

  it('inside an input object', async () => {
    const result = await gql(t.url, 'mutation { createPet(input: { name: "X", categoryId: "-5" }) { id } }', undefined, { key: t.adminKey });
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
  });

  it('in a filter', async () => {
    const result = await gql(t.url, 'query($f: PetFilter) { pets(filter: $f) { totalCount } }', { f: { categoryId: 'dogs' } });
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
  });
});

it('accepts a JSON number id that is a safe integer, and the largest int64 as a string', async () => {
  expect((await gql(t.url, 'query($id: ID!) { pet(id: $id) { id } }', { id: 12 })).data).toEqual({ pet: null });
  expect((await gql(t.url, '{ pet(id: 9223372036854775807) { id } }')).data).toEqual({ pet: null });
});
