import { COUNT_BOUND } from '../../src/common/bounds';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { CATALOGUE_ORDERS as ORDERS, loadCatalogue } from '../helpers/catalogue';
import { withEmbedded, withPostgres } from '../helpers/services';
import { printFigure } from '../helpers/figures';

/**
 * Every `totalCount` the schema offers, beside count(*) by SQL, on a catalogue far past the bound
 * a substring count stops at: loaded by SQL, then changed by a burst of concurrent writes through
 * the API. Only a substring filter may answer "at least"; everything else is exact at any size.
 */
withPostgres('100,050 pets on PostgreSQL', () => countsAtScale(100_050));
withEmbedded('10,500 pets embedded', () => countsAtScale(10_500));

const BUYERS = 6;
/** placeOrder takes 10 a minute from each key. */
const ORDERS_PER_BUYER = 8;
const STATUSES = ['AVAILABLE', 'PENDING', 'SOLD'] as const;

const COUNT = {
  pets: 'query($f: PetFilter) { c: pets(first: 1, filter: $f) { totalCount totalCountPrecision } }',
  inventory: 'query($f: InventoryFilter) { c: inventory(first: 1, filter: $f) { totalCount totalCountPrecision } }',
  orders: 'query($f: OrderFilter) { c: orders(first: 1, filter: $f) { totalCount totalCountPrecision } }',
  categories: '{ c: categories(first: 1) { totalCount totalCountPrecision } }',
  apiKeys: '{ c: apiKeys(first: 1) { totalCount totalCountPrecision } }',
};
const PETS_OF_CATEGORIES = '{ categories(first: 20) { nodes { id pets(first: 1) { totalCount totalCountPrecision } } } }';

/** One count the API answers and SQL checks. */
interface Counted {
  field: keyof typeof COUNT;
  filter?: Record<string, unknown>;
  /** A buyer's key (its own orders); the admin's, who sees every order, otherwise. */
  key?: string;
  /** count(*) of the same rows. */
  sql: string;
  /** A substring count: exact up to COUNT_BOUND, "at least" COUNT_BOUND past it. */
  bounded?: boolean;
}

type Answer = [total: number, precision: string];

function countsAtScale(pets: number): void {
  let t: TestApp;
  let categories: string[];
  let buyers: { key: string; id: string }[];
  const query = <T>(sql: string, values?: unknown[]): Promise<T[]> => t.db.dataSource.query(sql, values);
  const admin = () => ({ key: t.adminKey });

  beforeAll(async () => {
    t = await startTestApp({}, { limitInFlight: false });
    buyers = await Promise.all(Array.from({ length: BUYERS }, () => createApiKey(t, { plan: 'PRO' })));
    const started = performance.now();
    categories = await loadCatalogue(query, pets, buyers.map((buyer) => buyer.id));
    printFigure(`loaded ${pets} pets, their stock and ${ORDERS} orders by SQL in ${Math.round(performance.now() - started)} ms`);
  });
  afterAll(() => t?.close());

  /** Every count, labelled, as the API answers it and as SQL counts it: one diff shows every difference. */
  async function compare(): Promise<{ answered: Record<string, Answer>; counted: Record<string, Answer> }> {
    const all = countedList(categories, buyers);
    const [answers, sqlCounts, nested, perCategory] = await Promise.all([
      Promise.all(Object.values(all).map(({ field, filter, key }) => gql(t.url, COUNT[field], { f: filter }, { key: key ?? t.adminKey }))),
      Promise.all(Object.values(all).map(async ({ sql }) => (await query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`))[0].n)),
      gql(t.url, PETS_OF_CATEGORIES, undefined, admin()),
      query<{ id: string; n: number }>('SELECT c.id, count(p.id)::int AS n FROM categories c LEFT JOIN pets p ON p.category_id = c.id GROUP BY c.id'),
    ]);
    const labels = Object.keys(all);
    const answered: Record<string, Answer> = {};
    const counted: Record<string, Answer> = {};
    labels.forEach((label, i) => {
      const { data, errors } = answers[i];
      answered[label] = errors ? [NaN, JSON.stringify(errors)] : [data?.c.totalCount, data?.c.totalCountPrecision];
      counted[label] = all[label].bounded && sqlCounts[i] > COUNT_BOUND ? [COUNT_BOUND, 'AT_LEAST'] : [sqlCounts[i], 'EXACT'];
    });
    for (const { id, pets: count } of nested.data?.categories.nodes ?? []) answered[`Category ${id}.pets`] = [count.totalCount, count.totalCountPrecision];
    for (const { id, n } of perCategory) counted[`Category ${id}.pets`] = [n, 'EXACT'];
    return { answered, counted };
  }

  it('answers every totalCount as count(*) does, before and after concurrent creates, deletes, updates and orders', async () => {
    const before = await compare();
    expect(before.answered).toEqual(before.counted);
    expect(before.answered.pets).toEqual([pets, 'EXACT']);
    expect(before.answered.orders).toEqual([ORDERS, 'EXACT']);
    expect(before.answered['pets nameContains "Pet "']).toEqual([COUNT_BOUND, 'AT_LEAST']);

    const writes = await burst(t, query, categories, buyers);
    // On a busy machine a buyer's order may be refused before any statement runs, for its key's
    // share of the pool (429, which takes nothing); every other write succeeds.
    const early = writes.filter((result) => result.errors?.[0]?.extensions.code === 'RATE_LIMITED' && /share of the database/.test(result.errors[0].message));
    const failed = writes.filter((result) => !early.includes(result) && (result.errors || result.status !== 200)).map((result) => result.body);
    expect(failed).toEqual([]);

    const after = await compare();
    expect(after.answered).toEqual(after.counted);
    expect(after.answered.pets).toEqual([pets + BURST.creates - BURST.deletes, 'EXACT']);
    expect(after.answered.orders).toEqual([ORDERS + BUYERS * ORDERS_PER_BUYER - early.length - BURST.cancels, 'EXACT']);
    printFigure(`${Object.keys(after.answered).length} counts equal to count(*) before and after ${writes.length} concurrent writes, at ${pets} pets`);
  });
}

/** Every count the schema offers over the loaded catalogue, by label. */
function countedList(categories: string[], buyers: { key: string; id: string }[]): Record<string, Counted> {
  const list: Record<string, Counted> = {
    pets: { field: 'pets', sql: 'pets' },
    categories: { field: 'categories', sql: 'categories' },
    apiKeys: { field: 'apiKeys', sql: 'api_keys' },
    inventory: { field: 'inventory', sql: 'inventory_items' },
    orders: { field: 'orders', sql: 'orders' },
    'orders complete': { field: 'orders', filter: { complete: true }, sql: 'orders WHERE complete' },
    'orders open': { field: 'orders', filter: { complete: false }, sql: 'orders WHERE NOT complete' },
    [`orders of buyer ${buyers[0].id}`]: { field: 'orders', key: buyers[0].key, sql: `orders WHERE api_key_id = ${buyers[0].id}` },
    [`open orders of buyer ${buyers[1].id}`]: { field: 'orders', key: buyers[1].key, filter: { complete: false }, sql: `orders WHERE api_key_id = ${buyers[1].id} AND NOT complete` },
    'pets nameContains "Pet "': { field: 'pets', filter: { nameContains: 'Pet ' }, sql: `pets WHERE name ILIKE '%Pet %'`, bounded: true },
    'pets nameContains "Pet 1"': { field: 'pets', filter: { nameContains: 'Pet 1' }, sql: `pets WHERE name ILIKE '%Pet 1%'`, bounded: true },
    'pets nameContains "Pet 9999"': { field: 'pets', filter: { nameContains: 'Pet 9999' }, sql: `pets WHERE name ILIKE '%Pet 9999%'`, bounded: true },
  };
  for (const status of STATUSES) {
    const stored = `'${status.toLowerCase()}'`;
    list[`pets ${status}`] = { field: 'pets', filter: { status }, sql: `pets WHERE status = ${stored}` };
    list[`inventory ${status}`] = { field: 'inventory', filter: { status }, sql: `inventory_items WHERE status = ${stored}` };
    for (const categoryId of categories) {
      list[`pets ${status} of category ${categoryId}`] = { field: 'pets', filter: { status, categoryId }, sql: `pets WHERE status = ${stored} AND category_id = ${categoryId}` };
    }
  }
  for (const categoryId of categories) {
    list[`pets of category ${categoryId}`] = { field: 'pets', filter: { categoryId }, sql: `pets WHERE category_id = ${categoryId}` };
  }
  return list;
}

/** How many of each write the burst sends. */
const BURST = { creates: 30, deletes: 20, statusChanges: 20, moves: 10, stockChanges: 20, cancels: 15, completions: 15 };

/**
 * Concurrent writes that move every count: pets created, deleted, given another status or
 * category; stock set; orders placed by every buyer, cancelled and completed. Each on rows of its
 * own, so that every one succeeds.
 */
async function burst(t: TestApp, query: <T>(sql: string, values?: unknown[]) => Promise<T[]>, categories: string[], buyers: { key: string }[]) {
  const admin = { key: t.adminKey };
  const ids = async (sql: string) => (await query<{ id: string }>(sql)).map((row) => row.id);
  // Pets past the ordered ones have no orders: they can be deleted, moved and restocked freely.
  const free = await ids(`SELECT id FROM pets WHERE id NOT IN (SELECT pet_id FROM orders) ORDER BY id LIMIT ${BURST.deletes + BURST.statusChanges + BURST.moves + BURST.stockChanges}`);
  const [deleted, restatused, moved, restocked] = slices(free, [BURST.deletes, BURST.statusChanges, BURST.moves, BURST.stockChanges]);
  const orderable = await ids(
    `SELECT p.id FROM pets p JOIN inventory_items i ON i.pet_id = p.id
      WHERE p.status = 'available' AND i.quantity >= 1 AND p.id NOT IN (${free.join(', ')})
      ORDER BY p.id DESC LIMIT ${buyers.length * ORDERS_PER_BUYER}`,
  );
  const open = await ids(`SELECT id FROM orders WHERE NOT complete ORDER BY id LIMIT ${BURST.cancels + BURST.completions}`);
  const [cancelled, completed] = slices(open, [BURST.cancels, BURST.completions]);

  const call = (document: string, variables: Record<string, unknown>, key = admin) => gql(t.url, document, variables, key);
  const writes = [
    ...Array.from({ length: BURST.creates }, (_, i) =>
      call('mutation($input: NewPet!) { createPet(input: $input) { id } }', { input: { name: `New ${i}`, categoryId: categories[i % categories.length], status: STATUSES[i % 3] } }),
    ),
    ...deleted.map((id) => call('mutation($id: ID!) { deletePet(id: $id) }', { id })),
    ...restatused.map((id, i) => call('mutation($id: ID!, $s: PetStatus) { updatePet(id: $id, input: { status: $s }) { id } }', { id, s: STATUSES[i % 3] })),
    ...moved.map((id, i) => call('mutation($id: ID!, $c: ID) { updatePet(id: $id, input: { categoryId: $c }) { id } }', { id, c: categories[(i * 3) % categories.length] })),
    ...restocked.map((id, i) => call('mutation($id: ID!, $q: Int!) { updateInventory(petId: $id, input: { quantity: $q }) { quantity } }', { id, q: i % 3 })),
    ...orderable.map((petId, i) =>
      call('mutation($input: NewOrder!) { placeOrder(input: $input) { id } }', { input: { petId, quantity: 1 } }, { key: buyers[i % buyers.length].key }),
    ),
    ...cancelled.map((id) => call('mutation($id: ID!) { cancelOrder(id: $id) }', { id })),
    ...completed.map((id) => call('mutation($id: ID!) { completeOrder(id: $id) { id } }', { id })),
  ];
  return Promise.all(writes);
}

/** `list` cut into consecutive pieces of the given sizes. */
function slices<T>(list: T[], sizes: number[]): T[][] {
  let start = 0;
  return sizes.map((size) => list.slice(start, (start += size)));
}
