import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildSchema,
  execute,
  getNamedType,
  getOperationAST,
  getVariableValues,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  parse,
  print,
  typeFromAST,
} from 'graphql';
import { tagsOfChange } from '../../src/cache/cache-tags';
import { tagsOfAnswer, UNTAGGABLE } from '../../src/graphql/answer-tags';
import { cachePolicyOf } from '../../src/graphql/cache-control';
import { toId } from '../../src/common/id.scalar';
import { buildGatewaySchema } from '../../src/graphql/schema';
import { sampleVariables } from '../../src/graphql/sample-variables';
import { corpusDocument, corpusOperation } from '../frontend/corpus';
import { generateDocuments, type OracleDocument } from '../graphql/oracle-documents';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet, setStock } from '../helpers/builders';
import { gql } from '../helpers/gql';

/** What an answer read, from its data (src/cache/cache-tags.ts): by hand, then over generated documents and real answers. */
let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildGatewaySchema();
});

function tagsOf(text: string, data: Record<string, unknown>, variables: Record<string, unknown> = {}) {
  const document = parse(text);
  const operation = getOperationAST(document) as OperationDefinitionNode;
  const { coerced, errors } = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  if (!coerced) throw new Error(String(errors));
  return tagsOfAnswer(schema, document, operation, coerced, data);
}

describe('by hand', () => {
  it('tags a pet by the id its answer holds, and by the id its argument names', () => {
    expect(tagsOf('{ pet(id: "1") { id name } }', { pet: { id: '1', name: 'Rex' } })).toEqual(['pet:1']);
    expect(tagsOf('{ pet(id: "1") { name } }', { pet: { name: 'Rex' } })).toEqual(['pet:1']);
  });

  it('reads ids under aliases', () => {
    const text = '{ a: pet(id: "1") { key: id } b: pet(id: "2") { label: name } }';
    expect(tagsOf(text, { a: { key: '1' }, b: { label: 'Fido' } })).toEqual(['pet:1', 'pet:2']);
  });

  it('reads ids through named and inline fragments', () => {
    const text = 'query { ...Q } fragment Q on Query { pets { nodes { ...P } } } fragment P on Pet { ... on Pet { id } category { ...C } } fragment C on Category { id }';
    const data = { pets: { nodes: [{ id: '1', category: { id: '5' } }, { id: '2', category: { id: '6' } }] } };
    expect(tagsOf(text, data)).toEqual(['category:5', 'category:6', 'pet:1', 'pet:2', 'pets']);
  });

  it('tags a row read without its id by its list', () => {
    const text = '{ pets { nodes { name category { name } inventory { quantity } } } }';
    expect(tagsOf(text, { pets: { nodes: [{ name: 'Rex', category: { name: 'Dogs' }, inventory: { quantity: 1 } }] } })).toEqual(['categories', 'pets', 'stock']);
  });

  it('tags a lookup that found nothing by the id it asked for', () => {
    expect(tagsOf('query($id: ID!) { pet(id: $id) { name } }', { pet: null }, { id: '7' })).toEqual(['pet:7']);
    expect(tagsOf('{ category(id: "8") { id } inventoryItem(petId: "9") { quantity } }', { category: null, inventoryItem: null })).toEqual(['category:8', 'stock:9']);
  });

  it('tags an id as the scalar reads it, whatever its spelling', () => {
    expect(tagsOf('query($id: ID!) { pet(id: $id) { name } }', { pet: null }, { id: '007' })).toEqual(['pet:7']);
    expect(tagsOf('{ pet(id: 7) { name } }', { pet: null })).toEqual(['pet:7']);
  });

  it("tags a category's pets with the list of pets", () => {
    const text = '{ category(id: "3") { name pets(first: 2) { totalCount nodes { id } } } }';
    expect(tagsOf(text, { category: { name: 'Dogs', pets: { totalCount: 1, nodes: [{ id: '4' }] } } })).toEqual(['category:3', 'pet:4', 'pets']);
  });

  it("tags a pet's stock by the pet's id, and a stock row's pet by its petId", () => {
    expect(tagsOf('{ pet(id: "1") { inventory { quantity } } }', { pet: { inventory: { quantity: 3 } } })).toEqual(['pet:1', 'stock:1']);
    const text = '{ inventory { nodes { petId pet { name } } } }';
    expect(tagsOf(text, { inventory: { nodes: [{ petId: '2', pet: { name: 'Rex' } }] } })).toEqual(['pet:2', 'stock', 'stock:2']);
  });

  it('walks nested lists', () => {
    const text = '{ categories { nodes { id pets { nodes { id inventory { petId } } } } } }';
    const data = {
      categories: {
        nodes: [
          { id: '1', pets: { nodes: [{ id: '10', inventory: { petId: '10' } }, { id: '11', inventory: { petId: '11' } }] } },
          { id: '2', pets: { nodes: [] } },
        ],
      },
    };
    expect(tagsOf(text, data)).toEqual(['categories', 'category:1', 'category:2', 'pet:10', 'pet:11', 'pets', 'stock:10', 'stock:11']);
  });

  it('tags nothing a skipped field would have read', () => {
    const text = 'query($s: Boolean!) { pet(id: "1") { id } pets @skip(if: $s) { totalCount } }';
    expect(tagsOf(text, { pet: { id: '1' } }, { s: true })).toEqual(['pet:1']);
    expect(tagsOf(text, { pet: { id: '1' }, pets: { totalCount: 1 } }, { s: false })).toEqual(['pet:1', 'pets']);
  });

  it('names nothing for an answer holding what no tag names', () => {
    expect(tagsOf('{ rateLimit { limit } }', { rateLimit: { limit: 60 } })).toBe(UNTAGGABLE);
    expect(tagsOf('{ __schema { queryType { name } } }', { __schema: { queryType: { name: 'Query' } } })).toBe(UNTAGGABLE);
  });

  it('purges, for each change, the tags of what it changed', () => {
    expect(tagsOfChange({ type: 'pet', kind: 'UPDATED', id: '1' }).sort()).toEqual(['pet:1', 'pets', 'stock', 'stock:1']);
    expect(tagsOfChange({ type: 'stock', petId: '2', quantity: 0, status: 'sold' } as never).sort()).toEqual(['stock', 'stock:2']);
    expect(tagsOfChange({ type: 'category', kind: 'UPDATED', id: '3' }).sort()).toEqual(['categories', 'category:3']);
  });
});

/**
 * The ids an answer holds, found by running its document again over the answer itself with
 * graphql-js (each field resolved by its response key): aliases, fragments and @include/@skip
 * as graphql-js reads them, apart from the walk under test. A lookup's argument counts as an id
 * read, found or not, as the gateway's ID scalar reads it (`01` is pet 1).
 */
const SDL = buildSchema(readFileSync(join(__dirname, '..', '..', 'schema.graphql'), 'utf8'));
const ID_FIELDS: Record<string, string> = { 'Pet.id': 'pet', 'Category.id': 'category', 'InventoryItem.petId': 'stock' };
const LOOKUPS: Record<string, [kind: string, argument: string]> = { pet: ['pet', 'id'], category: ['category', 'id'], inventoryItem: ['stock', 'petId'] };

function idsIn(query: string, variables: Record<string, unknown>, data: Record<string, unknown>): Set<string> {
  const ids = new Set<string>();
  execute({
    schema: SDL,
    document: parse(query),
    rootValue: data,
    variableValues: variables,
    fieldResolver: (source: Record<string, unknown> | null, args, _context, info) => {
      const value = source?.[info.path.key as string];
      const kind = ID_FIELDS[`${info.parentType.name}.${info.fieldName}`];
      if (kind && value != null) ids.add(`${kind}:${toId(value)}`);
      const lookup = info.parentType.name === 'Query' ? LOOKUPS[info.fieldName] : undefined;
      if (lookup && info.path.key in (source ?? {})) ids.add(`${lookup[0]}:${toId(args[lookup[1]])}`);
      return value;
    },
  });
  return ids;
}

/** Every assignment of `names` to true and false, over each of `sets`. */
function truthTable(names: string[], sets: Record<string, unknown>[]): Record<string, unknown>[] {
  let rows = sets;
  for (const name of names) rows = rows.flatMap((row) => [{ ...row, [name]: false }, { ...row, [name]: true }]);
  return rows;
}

describe('over generated documents and real answers', () => {
  let t: TestApp;
  let petIds: string[];
  beforeAll(async () => {
    t = await startTestApp({}, { limitRequests: false });
    const [dogs, cats] = [await createCategory(t, 'Dogs'), await createCategory(t, 'Cats')];
    petIds = [await createPet(t, dogs, 'Rex'), await createPet(t, dogs, 'Fido'), await createPet(t, cats, 'Tom')];
    await setStock(t, petIds[0], 3);
  });
  afterAll(() => t.close());

  /** The front end's catalogue queries, each over every value of its Boolean variables. */
  const corpus = (): OracleDocument[] =>
    corpusDocument()
      .definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION && definition.operation === 'query')
      .map((operation) => ({ operation, query: print(corpusOperation(operation.name?.value as string)) }))
      .filter(({ query }) => !/rateLimit|orders/.test(query))
      .map(({ operation, query }) => ({
        name: operation.name?.value as string,
        query,
        variableSets: [{ ...sampleVariables(schema, operation), id: petIds[0] }],
        booleans: (operation.variableDefinitions ?? [])
          .filter((definition) => getNamedType(typeFromAST(schema, definition.type))?.name === 'Boolean')
          .map((definition) => definition.variable.name.value),
      }));

  it('tags every answer, for every value of its Boolean variables, with every pet, category and stock id it holds', async () => {
    const operations = [...corpus(), ...generateDocuments(14, 20_261_202, petIds, 1)];
    let checked = 0;
    let holdingIds = 0;
    const uncovered: { query: string; variables: Record<string, unknown>; missing: string[] }[] = [];
    // Only answers the cache may keep are tagged: the others (an order, say) are never kept.
    const kept = operations.filter(({ query }) => {
      const document = parse(query);
      return cachePolicyOf(schema, document, getOperationAST(document) as OperationDefinitionNode).scope === 'PUBLIC';
    });
    expect(kept.length).toBeGreaterThanOrEqual(operations.length / 2);
    const sends = kept.flatMap(({ query, booleans, variableSets }) => truthTable(booleans, variableSets).map((variables) => ({ query, variables })));
    // A few at a time: each answer is checked on its own.
    for (let first = 0; first < sends.length; first += 4) {
      await Promise.all(
        sends.slice(first, first + 4).map(async ({ query, variables }) => {
          const { data } = await gql(t.url, query, variables);
          if (!data) return;
          const tags = tagsOf(query, data, variables);
          const ids = idsIn(query, variables, data);
          checked++;
          if (ids.size > 0) holdingIds++;
          const missing = tags === UNTAGGABLE ? ['(untaggable)'] : [...ids].filter((id) => !tags.includes(id));
          if (missing.length) uncovered.push({ query, variables, missing });
        }),
      );
    }
    expect(uncovered.slice(0, 3)).toEqual([]);
    // Most answers hold data, most of those ids: the check did check.
    expect(checked).toBeGreaterThanOrEqual(30);
    expect(holdingIds).toBeGreaterThanOrEqual(checked / 2);
  });
});
