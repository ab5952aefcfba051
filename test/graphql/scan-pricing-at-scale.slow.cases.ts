import { COST, substringCost } from '../../src/common/query-cost';
import { crowdQuery } from '../bench/crowd-documents';
import { printFigure } from '../helpers/figures';
import { gql } from '../helpers/gql';
import { CROWD_COUNT, CROWD_PAGE, NAME_SEARCH, SEARCH_BOX, usePricedCatalogue } from './priced-catalogue';

/** A substring filter's price as the catalogue grows to 100,000 pets (priced-catalogue.ts): loaded by SQL, so in `npm run test:slow`. */
const catalogue = usePricedCatalogue();
const { growTo, petCount, priceOf } = catalogue;

it('prices the same documents higher as the catalogue grows, and the crowd’s as the scans they are at 100,000 pets', async () => {
  const table: string[] = [];
  for (const size of [20, 1_000, 10_000, 100_000]) {
    if (size > (await petCount())) await growTo(size);
    else expect(await catalogue.t.app.services.database.catalogueSize.refresh()).toBe(size);
    const prices = await Promise.all([SEARCH_BOX, NAME_SEARCH, CROWD_COUNT, CROWD_PAGE].map((query) => priceOf(query, { s0: 'qz'.padEnd(query === CROWD_PAGE ? 3 : 2, 'x') })));
    table.push(`${size} pets: ${prices.map(({ requested, ms, codes: refused }) => `${requested}${refused.length ? ' refused' : ''} (${ms} ms)`).join(' | ')}`);
    expect(prices.map(({ requested }) => requested)).toEqual([
      COST.CONNECTION + COST.COUNT + 10 * COST.OBJECT + 2 * substringCost(size, false),
      COST.CONNECTION + COST.COUNT + 10 * COST.OBJECT + 2 * substringCost(size, true),
      COST.CONNECTION + COST.COUNT + substringCost(size, false),
      COST.CONNECTION + COST.OBJECT + substringCost(size, true),
    ]);
  }
  printFigure(`search box | name search | crowd count | crowd page, by catalogue size:\n${table.join('\n')}`);

  // At 100,000 pets the search box's first letter is two scans: over the limit.
  const searchBox = await gql(catalogue.t.url, SEARCH_BOX);
  expect(searchBox.status).toBe(400);
  expect(searchBox.errors?.[0].message).toBe('Query cost 1322 exceeds the limit of 1000');
  // The crowd's documents: one count's scan fits, two do not; two pages fit, three do not.
  expect((await priceOf(CROWD_COUNT, { s0: 'qz' })).requested).toBe(662);
  expect((await priceOf(crowdQuery({ shape: 'count', aliases: 2 }), { s0: 'qz', s1: 'zq' })).codes).toEqual(['QUERY_TOO_COMPLEX']);
  expect((await priceOf(crowdQuery({ shape: 'page', aliases: 2 }), { s0: 'qzx', s1: 'zqx' })).codes).toEqual([]);
  expect((await priceOf(crowdQuery({ shape: 'page', aliases: 3 }), { s0: 'qzx', s1: 'zqx', s2: 'xzq' })).codes).toEqual(['QUERY_TOO_COMPLEX']);
}, 300_000);
