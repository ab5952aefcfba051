import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock, stockOf } from '../helpers/builders';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { gql } from '../helpers/gql';
import { seedDemoCatalogue } from '../../src/db/seed';

/**
 * The stock status rule lives once, as the database's stock_status() (migration DomainRules).
 * Here it is pinned to the contract, and then swapped for another rule: a path that derived the
 * status on its own (a twin in TypeScript, a CASE in a plpgsql function) would not follow the
 * swap, and fails below.
 */

let db: TestDatabase;
let t: TestApp;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await t?.close();
  await db.close();
});

const ruleOf = async (quantity: number, hasOpenOrder: boolean): Promise<string> =>
  (await db.dataSource.query('SELECT stock_status($1, $2) AS status', [quantity, hasOpenOrder]))[0].status;

it('derives the status as docs/contract.md §3 says: units left AVAILABLE; none, PENDING with an open order, else SOLD', async () => {
  for (const quantity of [0, 1, 2, 1_000_000]) {
    for (const open of [false, true]) {
      expect([quantity, open, await ruleOf(quantity, open)]).toEqual([quantity, open, quantity > 0 ? 'available' : open ? 'pending' : 'sold']);
    }
  }
});

describe('with the rule replaced, every path that writes stock follows it', () => {
  // Each outcome moved to another status, so that no path can agree with it by accident.
  const SWAPPED = { stocked: 'PENDING', openOrder: 'SOLD', otherwise: 'AVAILABLE' };
  let alice: string;
  const asAdmin = (query: string) => gql(t.url, query, undefined, { key: t.adminKey });

  beforeAll(async () => {
    await db.dataSource.query(`
      CREATE OR REPLACE FUNCTION stock_status(quantity integer, has_open_order boolean) RETURNS pet_status
      LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN quantity > 0 THEN 'pending' WHEN has_open_order THEN 'sold' ELSE 'available' END::pet_status
      $$`);
    t = await startTestApp({}, { db });
    alice = (await createApiKey(t, { name: 'alice', plan: 'PRO' })).key;
  });

  it('the demo catalogue', async () => {
    expect(await seedDemoCatalogue(db.dataSource)).toBe(true);
    const rows: { quantity: number; status: string }[] = await db.dataSource.query('SELECT quantity, status FROM inventory_items');
    expect(rows.length).toBeGreaterThan(0);
    for (const { quantity, status } of rows) expect([quantity, status]).toEqual([quantity, quantity > 0 ? 'pending' : 'available']);
  });

  it('createPet, updateInventory, placeOrder, completeOrder and cancelOrder', async () => {
    const petId = await createPet(t, await createCategory(t, 'Swapped'));
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: SWAPPED.otherwise });
    await setStock(t, petId, 5);
    expect(await stockOf(t, petId)).toEqual({ quantity: 5, status: SWAPPED.stocked });

    const first = (await placeOrder(t, alice, petId, 2)).data?.placeOrder.id;
    expect(await stockOf(t, petId)).toEqual({ quantity: 3, status: SWAPPED.stocked });
    const last = (await placeOrder(t, alice, petId, 3)).data?.placeOrder.id;
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: SWAPPED.openOrder });

    await asAdmin(`mutation { completeOrder(id: "${first}") { id } }`);
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: SWAPPED.openOrder });
    await asAdmin(`mutation { cancelOrder(id: "${last}") }`);
    expect(await stockOf(t, petId)).toEqual({ quantity: 3, status: SWAPPED.stocked });
    await setStock(t, petId, 0);
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: SWAPPED.otherwise });
  });
});
