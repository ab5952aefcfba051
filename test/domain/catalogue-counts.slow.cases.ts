import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock } from '../helpers/builders';
import { gql } from '../helpers/gql';

/**
 * `totalCount` reads counters the database keeps by category and status (pets) and by status
 * (stock). They must equal count(*) whatever writes ran, however concurrently, by the API or by
 * plain SQL.
 */
let t: TestApp;
let categories: string[];
beforeAll(async () => {
  t = await startTestApp();
  categories = [await createCategory(t, 'Dogs'), await createCategory(t, 'Cats'), await createCategory(t, 'Birds')];
});
afterAll(() => t.close());

const query = (sql: string) => t.db.dataSource.query(sql);

/** Every counter beside what counting the tables says; both sorted, zero counters left out. */
async function countersAndCounts() {
  return {
    pets: {
      counters: await query(`SELECT category_id, status::text, total::int FROM pet_counts WHERE total <> 0 ORDER BY 1, 2`),
      counted: await query(`SELECT category_id, status::text, count(*)::int AS total FROM pets GROUP BY 1, 2 ORDER BY 1, 2`),
    },
    stock: {
      counters: await query(`SELECT status::text, total::int FROM stock_counts WHERE total <> 0 ORDER BY 1`),
      counted: await query(`SELECT status::text, count(*)::int AS total FROM inventory_items GROUP BY 1 ORDER BY 1`),
    },
  };
}

async function expectExactCounters() {
  const { pets, stock } = await countersAndCounts();
  expect(pets.counters).toEqual(pets.counted);
  expect(stock.counters).toEqual(stock.counted);
}

const totalCount = async (filter: Record<string, unknown> = {}) =>
  (await gql(t.url, 'query($f: PetFilter) { pets(first: 1, filter: $f) { totalCount totalCountPrecision } }', { f: filter })).data?.pets;

it('stays exact under creates, deletes, status changes, stock changes and orders running in parallel', async () => {
  const admin = { key: t.adminKey };
  const seeded = await Promise.all(Array.from({ length: 30 }, (_, i) => createPet(t, categories[i % 3], `Pet ${i}`)));
  await Promise.all(seeded.map((id, i) => setStock(t, id, i % 4)));
  const buyers = await Promise.all([1, 2, 3].map(() => createApiKey(t, { plan: 'PRO' })));

  const statuses = ['AVAILABLE', 'PENDING', 'SOLD'];
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < 30; i += 1) {
    const id = seeded[i];
    writes.push(createPet(t, categories[(i + 1) % 3], `New ${i}`, statuses[i % 3] as 'SOLD'));
    if (i % 3 === 0) writes.push(gql(t.url, 'mutation($id: ID!) { deletePet(id: $id) }', { id }, admin));
    if (i % 3 === 1) writes.push(gql(t.url, 'mutation($id: ID!, $s: PetStatus) { updatePet(id: $id, input: { status: $s, categoryId: "' + categories[(i + 2) % 3] + '" }) { id } }', { id, s: statuses[(i + 1) % 3] }, admin));
    if (i % 3 === 2) {
      writes.push(placeOrder(t, buyers[i % 3].key, id, 1));
      writes.push(placeOrder(t, buyers[(i + 1) % 3].key, id, 1));
      writes.push(setStock(t, id, (i * 7) % 3));
    }
  }
  const settled = await Promise.allSettled(writes);
  expect(settled.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
  await expectExactCounters();

  const [{ total }] = await query('SELECT count(*)::int AS total FROM pets');
  expect(await totalCount()).toEqual({ totalCount: total, totalCountPrecision: 'EXACT' });
  for (const status of statuses) {
    const [{ n }] = await query(`SELECT count(*)::int AS n FROM pets WHERE status = '${status.toLowerCase()}'`);
    const [{ m }] = await query(`SELECT count(*)::int AS m FROM pets WHERE status = '${status.toLowerCase()}' AND category_id = ${categories[0]}`);
    expect((await totalCount({ status })).totalCount).toBe(n);
    expect((await totalCount({ status, categoryId: categories[0] })).totalCount).toBe(m);
  }
  const [{ sold }] = await query(`SELECT count(*)::int AS sold FROM inventory_items WHERE status = 'sold'`);
  expect((await gql(t.url, '{ inventory(first: 1, filter: { status: SOLD }) { totalCount } }')).data?.inventory.totalCount).toBe(sold);
});

it('stays exact when rows are loaded, changed and removed by plain SQL, in bulk', async () => {
  await query(`INSERT INTO pets (name, category_id, status) SELECT 'Bulk ' || i, ${categories[2]}, 'pending' FROM generate_series(1, 2000) i`);
  await query(`INSERT INTO inventory_items (pet_id, quantity, status) SELECT id, 0, 'sold' FROM pets WHERE name LIKE 'Bulk %'`);
  await query(`UPDATE pets SET status = 'available', category_id = ${categories[0]} WHERE name LIKE 'Bulk 1%'`);
  await query(`UPDATE inventory_items SET status = 'available', quantity = 5 WHERE pet_id IN (SELECT id FROM pets WHERE name LIKE 'Bulk 2%')`);
  await query(`DELETE FROM pets WHERE name LIKE 'Bulk 3%'`); // their stock rows go with them (ON DELETE CASCADE)
  await expectExactCounters();
});

it('recounts everything with refresh_catalogue_counts(), for a restore that ran without triggers', async () => {
  await query(`UPDATE pet_counts SET total = total + 7`);
  await query(`DELETE FROM stock_counts`);
  await query('SELECT refresh_catalogue_counts()');
  await expectExactCounters();
});

it('counts a substring search exactly up to 10,000, then says "at least"', async () => {
  await query(`INSERT INTO pets (name, category_id) SELECT 'Many ' || i, ${categories[1]} FROM generate_series(1, 10001) i`);
  expect(await totalCount({ nameContains: 'Many 1000' })).toEqual({ totalCount: 3, totalCountPrecision: 'EXACT' }); // Many 1000, 10000 and 10001
  expect(await totalCount({ nameContains: 'Many' })).toEqual({ totalCount: 10_000, totalCountPrecision: 'AT_LEAST' });
  await expectExactCounters();
});
