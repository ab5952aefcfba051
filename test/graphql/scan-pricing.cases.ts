import { print } from 'graphql';
import { COST, substringCost } from '../../src/common/query-cost';
import { corpusOperation } from '../frontend/corpus';
import { printFigure } from '../helpers/figures';
import { codes, gql } from '../helpers/gql';
import { SEARCH_BOX, usePricedCatalogue } from './priced-catalogue';

/** A substring filter's price on the demo catalogue (priced-catalogue.ts); at 100,000 pets, scan-pricing-at-scale.slow.cases.ts. */
const catalogue = usePricedCatalogue();
const { petCount } = catalogue;

it('loads the page of 8 parallel queries with a search box’s first letter anonymously on the demo catalogue, none refused', async () => {
  await catalogue.t.app.services.database.catalogueSize.refresh();
  const [rex, milo] = (await catalogue.t.db.dataSource.query("SELECT id FROM pets WHERE name IN ('Rex', 'Milo') ORDER BY name DESC")).map((row: { id: string }) => row.id);
  const corpus = (name: string) => print(corpusOperation(name));
  const page: [string, Record<string, unknown>?][] = [
    [corpus('PetList'), { first: 20, withStock: true }],
    [corpus('PetList'), { first: 100, withStock: true }],
    [corpus('PetList'), { first: 10, filter: { status: 'AVAILABLE' } }],
    [SEARCH_BOX],
    [corpus('CategoryList'), { first: 20 }],
    [corpus('PetDetail'), { id: rex, withKin: true }],
    [corpus('PetDetail'), { id: milo }],
    [corpus('Quota')],
  ];
  const results = await Promise.all(page.map(([query, variables]) => gql(catalogue.t.url, query, variables)));
  printFigure(`page of 8 on the demo catalogue (${await petCount()} pets), costs: ${results.map((result) => result.body.extensions?.cost?.requested).join(', ')}`);
  expect(results.map((result) => [result.status, codes(result)])).toEqual(Array(8).fill([200, []]));
  const search = results[3];
  expect(search.data?.pets.nodes.map((pet: { name: string }) => pet.name)).toContain('Bella');
  // The scans of its page and its count, priced over 20 pets.
  expect(search.body.extensions.cost.requested).toBe(COST.CONNECTION + COST.COUNT + 10 * COST.OBJECT + 2 * substringCost(20, false));
});
