import { print } from 'graphql';
import { COST, substringCost } from '../../src/common/query-cost';
import { seedDemoCatalogue } from '../../src/db/seed';
import { crowdQuery } from '../bench/crowd-documents';
import { corpusOperation } from '../frontend/corpus';
import { startTestApp, type TestApp } from '../helpers/app';
import { printFigure } from '../helpers/figures';
import { codes, gql } from '../helpers/gql';

/**
 * A substring filter is priced by the catalogue it reads (docs/contract.md §5): a search box on the
 * demo catalogue costs little, the same document on 100,000 pets is priced as the scan it is.
 * The gateway reads the catalogue's size a few seconds at a time; each step here reads it at once.
 */
const SEARCH_BOX = '{ pets(first: 10, filter: { nameContains: "a" }) { nodes { id name } totalCount } }';
const NAME_SEARCH = '{ pets(first: 10, filter: { nameContains: "rex" }) { nodes { id name } totalCount } }';
const CROWD_COUNT = crowdQuery({ shape: 'count', aliases: 1 });
const CROWD_PAGE = crowdQuery({ shape: 'page', aliases: 1 });

let t: TestApp;
let categoryId: string;
beforeAll(async () => {
  t = await startTestApp();
  await seedDemoCatalogue(t.db.dataSource);
  [{ id: categoryId }] = await t.db.dataSource.query('SELECT id FROM categories ORDER BY id LIMIT 1');
});
afterAll(() => t.close());

const petCount = async () => (await t.db.dataSource.query('SELECT count(*)::int AS n FROM pets'))[0].n as number;

/** Pets a statement adds: embedded, a statement of more would outlast the statement timeout (the name index is kept row by row). */
const PETS_A_STATEMENT = 10_000;

/** Adds pets by SQL up to `total`, and has the gateway read the catalogue's size now rather than within its few seconds. */
async function growTo(total: number): Promise<void> {
  for (let more = total - (await petCount()); more > 0; more -= PETS_A_STATEMENT) {
    const rows = Math.min(more, PETS_A_STATEMENT);
    await t.db.dataSource.query(`INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, $1, 'available' FROM generate_series(1, $2) i`, [categoryId, rows]);
  }
  expect(await t.app.services.database.catalogueSize.refresh()).toBe(total);
}

/** The requested cost the gateway reports for `query` (with `variables`), refused or not, and how long its answer took. */
async function priceOf(query: string, variables?: Record<string, unknown>): Promise<{ requested: number; ms: number; codes: string[] }> {
  const started = performance.now();
  const result = await gql(t.url, query, variables, { key: t.adminKey });
  return { requested: result.body.extensions.cost.requested, ms: Math.round(performance.now() - started), codes: codes(result) };
}

it('loads the page of 8 parallel queries with a search box’s first letter anonymously on the demo catalogue, none refused', async () => {
  await t.app.services.database.catalogueSize.refresh();
  const [rex, milo] = (await t.db.dataSource.query("SELECT id FROM pets WHERE name IN ('Rex', 'Milo') ORDER BY name DESC")).map((row: { id: string }) => row.id);
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
  const results = await Promise.all(page.map(([query, variables]) => gql(t.url, query, variables)));
  printFigure(`page of 8 on the demo catalogue (${await petCount()} pets), costs: ${results.map((result) => result.body.extensions?.cost?.requested).join(', ')}`);
  expect(results.map((result) => [result.status, codes(result)])).toEqual(Array(8).fill([200, []]));
  const search = results[3];
  expect(search.data?.pets.nodes.map((pet: { name: string }) => pet.name)).toContain('Bella');
  // The scans of its page and its count, priced over 20 pets.
  expect(search.body.extensions.cost.requested).toBe(COST.CONNECTION + COST.COUNT + 10 * COST.OBJECT + 2 * substringCost(20, false));
});

it('prices the same documents higher as the catalogue grows, and the crowd’s as the scans they are at 100,000 pets', async () => {
  const table: string[] = [];
  for (const size of [20, 1_000, 10_000, 100_000]) {
    if (size > (await petCount())) await growTo(size);
    else expect(await t.app.services.database.catalogueSize.refresh()).toBe(size);
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
  const searchBox = await gql(t.url, SEARCH_BOX);
  expect(searchBox.status).toBe(400);
  expect(searchBox.errors?.[0].message).toBe('Query cost 1322 exceeds the limit of 1000');
  // The crowd's documents: one count's scan fits, two do not; two pages fit, three do not.
  expect((await priceOf(CROWD_COUNT, { s0: 'qz' })).requested).toBe(662);
  expect((await priceOf(crowdQuery({ shape: 'count', aliases: 2 }), { s0: 'qz', s1: 'zq' })).codes).toEqual(['QUERY_TOO_COMPLEX']);
  expect((await priceOf(crowdQuery({ shape: 'page', aliases: 2 }), { s0: 'qzx', s1: 'zqx' })).codes).toEqual([]);
  expect((await priceOf(crowdQuery({ shape: 'page', aliases: 3 }), { s0: 'qzx', s1: 'zqx', s2: 'xzq' })).codes).toEqual(['QUERY_TOO_COMPLEX']);
}, 300_000);
