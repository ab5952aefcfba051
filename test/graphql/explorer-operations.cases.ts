import { OPERATIONS_OF } from '../../src/graphql/explorer/operations-of';

/** The explorer page's own reading of a document, run here as the browser runs it. */
const operationsOf = new Function(`${OPERATIONS_OF}; return operationsOf;`)() as (text: string) => { type: string; name?: string }[];

it.each([
  ['query FirstPets { pets { totalCount } }', [{ type: 'query', name: 'FirstPets' }]],
  ['{ pets { totalCount } }', [{ type: 'query' }]],
  ['mutation AddCategory {\n  createCategory(input: { name: "Ra}bbits" }) { id }\n}', [{ type: 'mutation', name: 'AddCategory' }]],
  ['subscription NewPets { petChanged { kind } }', [{ type: 'subscription', name: 'NewPets' }]],
  [
    '# query Commented {\nquery A($f: PetFilter = { status: AVAILABLE }) @cached { a }\nfragment F on Pet { id }\nmutation B { x }',
    [{ type: 'query', name: 'A' }, { type: 'mutation', name: 'B' }],
  ],
  ['query @live { a }', [{ type: 'query' }]],
  ['query E($s: String = "a\\"{") { a } """{""" subscription S { b }', [{ type: 'query', name: 'E' }, { type: 'subscription', name: 'S' }]],
])('reads the operations of %p', (text, operations) => {
  expect(operationsOf(text)).toEqual(operations);
});
