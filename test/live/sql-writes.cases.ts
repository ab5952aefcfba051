import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, setStock, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, caughtUp, eventually, liveSession, subscribed } from '../helpers/live';

/**
 * The tables announce their own changes (migration ChangeTriggers): a write made with plain SQL,
 * as psql, a migration or another service makes it, reaches subscribers over the real transport
 * as the same event a write through the API gives.
 */

let t: TestApp;
const live = liveSession();
beforeAll(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await live.closeAll();
  await eventually(async () => (await activeSubscriptions(t)) === 0);
});
afterAll(() => t.close());

const sql = (text: string, values?: unknown[]) => t.db.dataSource.query(text, values);

it('sends a pet renamed by SQL to petChanged subscribers as it sends one renamed through the API', async () => {
  const petId = await stockedPet(t, 1, 'Before');
  await caughtUp(t);
  const feed = live.watch(live.client(t), 'subscription($ids: [ID!]) { petChanged(ids: $ids) { kind id pet { id name } } }', { ids: [petId] });
  await subscribed(t, 1);

  await gql(t.url, `mutation { updatePet(id: "${petId}", input: { name: "By the API" }) { id } }`, undefined, { key: t.adminKey });
  // An event reads the pet when it is delivered: the first is out before the second change.
  await feed.until(1);
  await sql("UPDATE pets SET name = 'By SQL' WHERE id = $1", [petId]);
  await feed.until(2);
  expect(feed.events.map((event) => event.data?.petChanged)).toEqual([
    { kind: 'UPDATED', id: petId, pet: { id: petId, name: 'By the API' } },
    { kind: 'UPDATED', id: petId, pet: { id: petId, name: 'By SQL' } },
  ]);
});

it('sends stock changed by SQL to inventoryChanged subscribers as it sends stock changed through the API', async () => {
  const petId = await stockedPet(t, 2);
  const category = await createCategory(t, 'Elsewhere');
  await caughtUp(t);
  const feed = live.watch(live.client(t), 'subscription($petIds: [ID!]) { inventoryChanged(petIds: $petIds) { petId quantity status } }', {
    petIds: [petId],
  });
  await subscribed(t, 1);

  await setStock(t, petId, 5);
  await sql('UPDATE inventory_items SET quantity = 7 WHERE pet_id = $1', [petId]);
  // Another pet's stock, by SQL too, then a last change of this one as a marker: nothing else may come before it.
  await sql(
    `WITH pet AS (INSERT INTO pets (name, category_id) VALUES ('Other', $1) RETURNING id)
     INSERT INTO inventory_items (pet_id, quantity, status) SELECT id, 1, 'available' FROM pet`,
    [category],
  );
  await sql("UPDATE inventory_items SET quantity = 0, status = 'sold' WHERE pet_id = $1", [petId]);
  await feed.until(3);
  expect(feed.events.map((event) => event.data?.inventoryChanged)).toEqual([
    { petId, quantity: 5, status: 'AVAILABLE' },
    { petId, quantity: 7, status: 'AVAILABLE' },
    { petId, quantity: 0, status: 'SOLD' },
  ]);
});
