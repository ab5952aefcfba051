import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { caughtUp } from '../helpers/live';
import { CHANGE_SHAPES, parseChange } from '../../src/live/change-hub';
import { fitsShape } from '../../src/sql/notification-shape';

/**
 * Change notifications are built in two languages: pet changes in TypeScript, stock and order
 * changes by the database's stock_change() and order_change() (for place_order, which runs in
 * PostgreSQL). Each kind's one definition is its shape in CHANGE_SHAPES; here every kind, made by
 * real writes, must pass the hub's check exactly as sent, or it would never reach a subscriber.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** Every `type` with each of its kinds, as the shapes list them: `stock`, `pet:CREATED`, … */
const everyKind = Object.entries(CHANGE_SHAPES).flatMap(([type, shape]) =>
  'kind' in shape ? shape.kind.map((kind) => `${type}:${kind}`) : [type],
);
const kindOf = (change: { type: string; kind?: string }) => (change.kind ? `${change.type}:${change.kind}` : change.type);

it('passes every kind of change that real writes announce through the hub as it was sent', async () => {
  const received = jest.spyOn(t.app.services.live.hub, 'receive');
  const alice = (await createApiKey(t, { name: 'alice', plan: 'PRO' })).key;
  const asAdmin = (query: string) => gql(t.url, query, undefined, { key: t.adminKey });

  const category = await createCategory(t, 'Announced');
  const petId = await createPet(t, category);
  await asAdmin(`mutation { updatePet(id: "${petId}", input: { name: "Renamed" }) { id } }`);
  await setStock(t, petId, 3);
  const completed = (await placeOrder(t, alice, petId, 1)).data?.placeOrder.id;
  const cancelled = (await placeOrder(t, alice, petId, 2)).data?.placeOrder.id;
  await asAdmin(`mutation { completeOrder(id: "${completed}") { id } }`);
  await asAdmin(`mutation { cancelOrder(id: "${cancelled}") }`);
  await asAdmin(`mutation { deletePet(id: "${await createPet(t, category, 'Gone')}") }`);
  await caughtUp(t);
  const payloads = received.mock.calls.map(([payload]) => payload).filter((payload) => !payload.includes('"petId":"0"'));
  received.mockRestore();

  for (const payload of payloads) expect([payload, parseChange(payload)]).toEqual([payload, JSON.parse(payload)]);
  expect([...new Set(payloads.map((payload) => kindOf(JSON.parse(payload))))].sort()).toEqual([...everyKind].sort());
});

it('builds stock and order changes in SQL to their shapes, for every status and kind', async () => {
  for (const status of CHANGE_SHAPES.stock.status) {
    const [{ payload }] = await t.db.dataSource.query('SELECT stock_change(42, 7, $1) AS payload', [status]);
    expect([payload, fitsShape(CHANGE_SHAPES.stock, JSON.parse(payload))]).toEqual([payload, true]);
  }
  for (const kind of CHANGE_SHAPES.order.kind) {
    const [{ payload }] = await t.db.dataSource.query('SELECT order_change($1, 42, 9007199254740993) AS payload', [kind]);
    expect(JSON.parse(payload)).toEqual({ type: 'order', kind, id: '42', apiKeyId: '9007199254740993' });
    expect(fitsShape(CHANGE_SHAPES.order, JSON.parse(payload))).toBe(true);
  }
});
