import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { caughtUp } from '../helpers/live';
import { CHANGE_SHAPES, parseChange } from '../../src/live/change-hub';
import { fitsShape } from '../../src/sql/notification-shape';

/**
 * Change notifications are built in SQL, by the tables' triggers (migration ChangeTriggers) with
 * catalogue_change(), stock_change() and order_change(), and checked in TypeScript. Each kind's one
 * definition is its shape in CHANGE_SHAPES; here every kind, made by real writes through the API
 * and by plain SQL, must pass the hub's check exactly as sent, or it would never reach a subscriber.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const asAdmin = (query: string) => gql(t.url, query, undefined, { key: t.adminKey });
const sql = (text: string, values?: unknown[]) => t.db.dataSource.query(text, values);

/** Every `type` with each of its kinds, as the shapes list them: `stock`, `pet:CREATED`, … */
const everyKind = Object.entries(CHANGE_SHAPES).flatMap(([type, shape]) =>
  'kind' in shape ? shape.kind.map((kind) => `${type}:${kind}`) : [type],
);
const kindOf = (change: { type: string; kind?: string }) => (change.kind ? `${change.type}:${change.kind}` : change.type);

/** The payloads the hub receives while `writes` runs, up to a marker sent after it (caughtUp's, left out). */
async function announced(writes: () => Promise<unknown>): Promise<string[]> {
  await caughtUp(t);
  const received = jest.spyOn(t.app.services.live.hub, 'receive');
  try {
    await writes();
    await caughtUp(t);
    return received.mock.calls.map(([payload]) => payload).filter((payload) => !payload.includes('"petId":"0"'));
  } finally {
    received.mockRestore();
  }
}

it('passes every kind of change that real writes announce through the hub as it was sent', async () => {
  const alice = (await createApiKey(t, { name: 'alice', plan: 'PRO' })).key;
  const payloads = await announced(async () => {
    const category = await createCategory(t, 'Announced');
    const petId = await createPet(t, category);
    await asAdmin(`mutation { updatePet(id: "${petId}", input: { name: "Renamed" }) { id } }`);
    await setStock(t, petId, 3);
    const completed = (await placeOrder(t, alice, petId, 1)).data?.placeOrder.id;
    const cancelled = (await placeOrder(t, alice, petId, 2)).data?.placeOrder.id;
    await asAdmin(`mutation { completeOrder(id: "${completed}") { id } }`);
    await asAdmin(`mutation { cancelOrder(id: "${cancelled}") }`);
    await asAdmin(`mutation { deletePet(id: "${await createPet(t, category, 'Gone')}") }`);
    const emptied = await createCategory(t, 'Emptied');
    await asAdmin(`mutation { updateCategory(id: "${emptied}", input: { name: "Renamed" }) { id } }`);
    await asAdmin(`mutation { deleteCategory(id: "${emptied}") }`);
  });

  for (const payload of payloads) expect([payload, parseChange(payload)]).toEqual([payload, JSON.parse(payload)]);
  expect([...new Set(payloads.map((payload) => kindOf(JSON.parse(payload))))].sort()).toEqual([...everyKind].sort());
});

it('announces each write made with plain SQL, on every table, once and to its shape', async () => {
  const { id: keyId } = await createApiKey(t, { name: 'bob', plan: 'PRO' });
  const ids: { category?: string; pet?: string; order?: string } = {};
  const payloads = await announced(async () => {
    const [{ id: category }] = await sql("INSERT INTO categories (name) VALUES ('By SQL') RETURNING id");
    await sql("UPDATE categories SET description = 'Written by hand' WHERE id = $1", [category]);
    const [{ id: pet }] = await sql("INSERT INTO pets (name, category_id) VALUES ('By SQL', $1) RETURNING id", [category]);
    await sql("UPDATE pets SET name = 'Renamed by SQL' WHERE id = $1", [pet]);
    await sql("INSERT INTO inventory_items (pet_id, quantity, status) VALUES ($1, 3, 'available')", [pet]);
    await sql('UPDATE inventory_items SET quantity = 2 WHERE pet_id = $1', [pet]);
    const [{ id: order }] = await sql('INSERT INTO orders (pet_id, quantity, api_key_id) VALUES ($1, 1, $2) RETURNING id', [pet, keyId]);
    await sql('UPDATE orders SET complete = true WHERE id = $1', [order]);
    await sql('DELETE FROM orders WHERE id = $1', [order]);
    await sql('DELETE FROM pets WHERE id = $1', [pet]);
    await sql('DELETE FROM categories WHERE id = $1', [category]);
    Object.assign(ids, { category, pet, order });
  });

  const { category, pet, order } = ids;
  for (const payload of payloads) expect([payload, parseChange(payload)]).toEqual([payload, JSON.parse(payload)]);
  expect(payloads.map((payload) => JSON.parse(payload))).toEqual([
    { type: 'category', kind: 'CREATED', id: category },
    { type: 'category', kind: 'UPDATED', id: category },
    { type: 'pet', kind: 'CREATED', id: pet },
    { type: 'pet', kind: 'UPDATED', id: pet },
    { type: 'stock', petId: pet, quantity: 3, status: 'available' },
    { type: 'stock', petId: pet, quantity: 2, status: 'available' },
    { type: 'order', kind: 'PLACED', id: order, apiKeyId: keyId },
    { type: 'order', kind: 'COMPLETED', id: order, apiKeyId: keyId },
    { type: 'order', kind: 'CANCELLED', id: order, apiKeyId: keyId },
    // The stock row goes with its pet (ON DELETE CASCADE): the pet's DELETED says it.
    { type: 'pet', kind: 'DELETED', id: pet },
    { type: 'category', kind: 'DELETED', id: category },
  ]);
});

it('announces nothing for an UPDATE that leaves its row as it was, by SQL or through the API', async () => {
  const { key } = await createApiKey(t, { name: 'carol', plan: 'PRO' });
  const category = await createCategory(t, 'Unchanged');
  const petId = await createPet(t, category, 'Same');
  await setStock(t, petId, 4);
  const orderId = (await placeOrder(t, key, petId, 1)).data?.placeOrder.id;
  await asAdmin(`mutation { completeOrder(id: "${orderId}") { id } }`);

  const payloads = await announced(async () => {
    await sql('UPDATE categories SET name = name WHERE id = $1', [category]);
    await sql("UPDATE pets SET name = 'Same' WHERE id = $1", [petId]);
    await sql('UPDATE inventory_items SET quantity = quantity, status = status WHERE pet_id = $1', [petId]);
    // Completed already: no second COMPLETED.
    await sql('UPDATE orders SET complete = true, quantity = quantity WHERE id = $1', [orderId]);
    await asAdmin(`mutation { updatePet(id: "${petId}", input: { name: "Same" }) { id } }`);
    await asAdmin(`mutation { updateCategory(id: "${category}", input: {}) { id } }`);
  });
  expect(payloads).toEqual([]);
});

it('hands a category change to the hub as a `category` change, to the listeners of its id', async () => {
  const category = await createCategory(t, 'Heard');
  const other = await createCategory(t, 'Not heard');
  await caughtUp(t);
  const changes = t.app.services.live.hub.categoryChanges([category]);
  await asAdmin(`mutation { updateCategory(id: "${other}", input: { name: "Still not heard" }) { id } }`);
  await asAdmin(`mutation { updateCategory(id: "${category}", input: { name: "Heard again" }) { id } }`);
  expect((await changes.next()).value).toEqual({ type: 'category', kind: 'UPDATED', id: category });
  await changes.return?.();
});

it('builds every change in SQL to its shape, for every status and kind', async () => {
  for (const status of CHANGE_SHAPES.stock.status) {
    const [{ payload }] = await sql('SELECT stock_change(42, 7, $1) AS payload', [status]);
    expect([payload, fitsShape(CHANGE_SHAPES.stock, JSON.parse(payload))]).toEqual([payload, true]);
  }
  for (const kind of CHANGE_SHAPES.order.kind) {
    const [{ payload }] = await sql('SELECT order_change($1, 42, 9007199254740993) AS payload', [kind]);
    expect(JSON.parse(payload)).toEqual({ type: 'order', kind, id: '42', apiKeyId: '9007199254740993' });
    expect(fitsShape(CHANGE_SHAPES.order, JSON.parse(payload))).toBe(true);
  }
  for (const type of ['pet', 'category'] as const) {
    for (const kind of CHANGE_SHAPES[type].kind) {
      const [{ payload }] = await sql('SELECT catalogue_change($1, $2, 9007199254740993) AS payload', [type, kind]);
      expect(JSON.parse(payload)).toEqual({ type, kind, id: '9007199254740993' });
      expect(fitsShape(CHANGE_SHAPES[type], JSON.parse(payload))).toBe(true);
    }
  }
});
