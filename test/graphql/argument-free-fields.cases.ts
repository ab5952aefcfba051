import { buildSchema, execute, parse } from 'graphql';
import { shareArgumentsOfArgumentFreeFields } from '../../src/graphql/argument-free-fields';

it('gives every field without arguments one frozen empty object, and coerces the arguments of the rest as graphql-js does', async () => {
  shareArgumentsOfArgumentFreeFields();
  const schema = buildSchema('type Query { items: [Item] sized(n: Int = 3, s: String): String } type Item { name: String }');
  const given: unknown[] = [];
  const item = { name: (args: unknown) => (given.push(args), 'a pet') };
  const rootValue = {
    items: (args: unknown) => (given.push(args), [item, item]),
    sized: (args: Record<string, unknown>) => JSON.stringify({ ...args }),
  };
  const document = parse('query ($s: String) { items { name } sized(s: $s) again: sized(n: 5) }');
  const result = await execute({ schema, document, rootValue, variableValues: { s: 'x' } });

  expect(result).toEqual({ data: { items: [{ name: 'a pet' }, { name: 'a pet' }], sized: '{"n":3,"s":"x"}', again: '{"n":5}' } });
  expect(given).toHaveLength(3);
  expect(new Set(given).size).toBe(1);
  expect(Object.isFrozen(given[0])).toBe(true);
  expect(Object.getPrototypeOf(given[0])).toBeNull();
  expect(Object.keys(given[0] as object)).toEqual([]);
});
