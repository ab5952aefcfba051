import { useGeneratedCode } from './generated-code';

/** What GraphQL Code Generator makes of the schema and the corpus (generated-code.ts); the type check of it is in codegen-types.slow.cases.ts. */
const { outputs } = useGeneratedCode();

it('generates a typed document and result types for every operation and fragment of the corpus', () => {
  const generated = outputs['graphql.ts'];
  for (const name of ['PetList', 'PetDetail', 'CategoryList', 'MyOrders', 'Quota'])
    expect(generated).toMatch(new RegExp(`export const ${name}Document = .* as unknown as DocumentNode<${name}Query, ${name}QueryVariables>;`));
  for (const name of ['PlaceOrder', 'CancelOrder', 'CreatePet', 'UpdateInventory'])
    expect(generated).toMatch(new RegExp(`export const ${name}Document = .* as unknown as DocumentNode<${name}Mutation, ${name}MutationVariables>;`));
  for (const name of ['PetCard', 'StockBadge', 'OrderLine']) expect(generated).toContain(`export type ${name}Fragment = `);
});

it('maps the custom scalars to strings and keeps the schema descriptions', () => {
  const schemaTypes = outputs['schema.ts'];
  expect(schemaTypes).toContain('DateTime: { input: string; output: string; }');
  expect(schemaTypes).toContain('ID: { input: string; output: string; }');
  expect(schemaTypes).toContain('/** An animal in the catalogue. */\nexport type Pet = {');
  expect(schemaTypes).toContain("/** The animal's name, 1 to 100 characters. */\n  name: Scalars['String']['output'];");
  const operations = outputs['graphql.ts'];
  expect(operations).toContain('/** An order to place for units of one pet. */\nexport type NewOrder = {');
  expect(operations).toContain('shipDate?: string | null | undefined;');
});
