import { Client } from 'pg';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock, stockedPet, stockOf } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

let t: TestApp;
let alice: string;
let bob: string;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());
// Fresh clients for every test: placeOrder is limited to 10 a minute per key.
beforeEach(async () => {
  alice = (await createApiKey(t, { name: 'alice', plan: 'PRO' })).key;
  bob = (await createApiKey(t, { name: 'bob', plan: 'PRO' })).key;
});

describe('placeOrder', () => {
  it('takes the quantity from stock and opens an order owned by the key', async () => {
    const petId = await stockedPet(t, 5);
    const result = await placeOrder(t, alice, petId, 2, undefined, '2027-01-02T03:04:05Z');
    expect(result.errors).toBeUndefined();
    expect(result.data?.placeOrder).toMatchObject({ petId, quantity: 2, shipDate: '2027-01-02T03:04:05.000Z', complete: false });
    expect(await stockOf(t, petId)).toEqual({ quantity: 3, status: 'AVAILABLE' });
  });

  it('leaves the stock PENDING when it takes the last units', async () => {
    const petId = await stockedPet(t, 2);
    await placeOrder(t, alice, petId, 2);
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: 'PENDING' });
  });

  it('checks, in order: the pet exists, it is AVAILABLE, the stock covers the quantity', async () => {
    expect(codes(await placeOrder(t, alice, '999999', 1))).toEqual(['NOT_FOUND']);

    const category = await createCategory(t);
    const pending = await createPet(t, category, 'Held', 'PENDING');
    await setStock(t, pending, 0); // unavailable AND out of stock: PET_NOT_AVAILABLE wins
    const notAvailable = await placeOrder(t, alice, pending, 1);
    expect(notAvailable.errors?.[0].extensions).toEqual({ code: 'PET_NOT_AVAILABLE', status: 409 });

    const soldOut = await stockedPet(t, 0);
    const empty = await placeOrder(t, alice, soldOut, 1);
    expect(empty.errors?.[0].extensions).toEqual({ code: 'INSUFFICIENT_STOCK', status: 409 });

    const few = await stockedPet(t, 3);
    const tooMany = await placeOrder(t, alice, few, 4);
    expect(tooMany.errors?.[0]).toMatchObject({ message: expect.stringContaining('has 3 in stock; 4 requested'), extensions: { code: 'INSUFFICIENT_STOCK' } });
    expect(await stockOf(t, few)).toEqual({ quantity: 3, status: 'AVAILABLE' });
  });

  it('places an order in one SQL statement, refusals and idempotency included (issue 14: at most 2)', async () => {
    const petId = await stockedPet(t, 10);
    await placeOrder(t, alice, petId, 1, 'warm-up'); // the key's lookup and the instance's first purge of expired keys
    const statementsOf = async (place: () => Promise<unknown>) => {
      const query = Client.prototype.query;
      let statements = 0;
      Client.prototype.query = function (this: Client, ...args: unknown[]) {
        statements += 1;
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof Client.prototype.query;
      try {
        await place();
      } finally {
        Client.prototype.query = query;
      }
      return statements;
    };
    expect(await statementsOf(() => placeOrder(t, alice, petId, 1))).toBe(1);
    expect(await statementsOf(() => placeOrder(t, alice, petId, 1, 'once'))).toBe(1);
    expect(await statementsOf(() => placeOrder(t, alice, petId, 1, 'once'))).toBe(1); // the replay
    expect(await statementsOf(() => placeOrder(t, alice, petId, 100))).toBe(1); // INSUFFICIENT_STOCK
    expect(await stockOf(t, petId)).toEqual({ quantity: 7, status: 'AVAILABLE' });
  });

  it.each([[0], [1001], [-3]])('refuses quantity %p with BAD_USER_INPUT', async (quantity) => {
    const petId = await stockedPet(t, 5);
    const result = await placeOrder(t, alice, petId, quantity);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    expect(await stockOf(t, petId)).toEqual({ quantity: 5, status: 'AVAILABLE' });
  });

  it('refuses a malformed shipDate before execution', async () => {
    const petId = await stockedPet(t, 5);
    const result = await placeOrder(t, alice, petId, 1, undefined, 'next tuesday');
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
  });

  it('needs a key', async () => {
    const petId = await stockedPet(t, 5);
    const result = await gql(t.url, `mutation { placeOrder(input: { petId: "${petId}", quantity: 1 }) { id } }`);
    expect(result.errors?.[0].extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
  });
});

describe('completeOrder', () => {
  it('completes an open order once; the second time is ORDER_ALREADY_COMPLETE', async () => {
    const petId = await stockedPet(t, 5);
    const id = (await placeOrder(t, alice, petId, 1)).data?.placeOrder.id;
    const done = await gql(t.url, `mutation { completeOrder(id: "${id}") { id complete } }`, undefined, { key: t.adminKey });
    expect(done.data?.completeOrder).toEqual({ id, complete: true });
    const again = await gql(t.url, `mutation { completeOrder(id: "${id}") { id } }`, undefined, { key: t.adminKey });
    expect(again.errors?.[0].extensions).toEqual({ code: 'ORDER_ALREADY_COMPLETE', status: 409 });
  });

  it('turns stock at 0 from PENDING to SOLD when the last open order completes', async () => {
    const petId = await stockedPet(t, 2);
    const first = (await placeOrder(t, alice, petId, 1)).data?.placeOrder.id;
    const second = (await placeOrder(t, bob, petId, 1)).data?.placeOrder.id;
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: 'PENDING' });
    await gql(t.url, `mutation { completeOrder(id: "${first}") { id } }`, undefined, { key: t.adminKey });
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: 'PENDING' });
    await gql(t.url, `mutation { completeOrder(id: "${second}") { id } }`, undefined, { key: t.adminKey });
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: 'SOLD' });
  });

  it('is for admins: FORBIDDEN to a client, NOT_FOUND for an unknown order', async () => {
    const petId = await stockedPet(t, 5);
    const id = (await placeOrder(t, alice, petId, 1)).data?.placeOrder.id;
    const client = await gql(t.url, `mutation { completeOrder(id: "${id}") { id } }`, undefined, { key: alice });
    expect(client.errors?.[0].extensions).toEqual({ code: 'FORBIDDEN', status: 403 });
    const unknown = await gql(t.url, 'mutation { completeOrder(id: "888888") { id } }', undefined, { key: t.adminKey });
    expect(codes(unknown)).toEqual(['NOT_FOUND']);
  });
});

describe('cancelOrder', () => {
  it('returns the units to stock, re-derives the status and removes the order', async () => {
    const petId = await stockedPet(t, 3);
    const id = (await placeOrder(t, alice, petId, 3)).data?.placeOrder.id;
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: 'PENDING' });
    const cancelled = await gql(t.url, `mutation { cancelOrder(id: "${id}") }`, undefined, { key: alice });
    expect(cancelled.data).toEqual({ cancelOrder: id });
    expect(await stockOf(t, petId)).toEqual({ quantity: 3, status: 'AVAILABLE' });
    expect((await gql(t.url, `{ order(id: "${id}") { id } }`, undefined, { key: alice })).data).toEqual({ order: null });
  });

  it('refuses a completed order with ORDER_ALREADY_COMPLETE, changing nothing', async () => {
    const petId = await stockedPet(t, 1);
    const id = (await placeOrder(t, alice, petId, 1)).data?.placeOrder.id;
    await gql(t.url, `mutation { completeOrder(id: "${id}") { id } }`, undefined, { key: t.adminKey });
    const result = await gql(t.url, `mutation { cancelOrder(id: "${id}") }`, undefined, { key: alice });
    expect(result.errors?.[0].extensions).toEqual({ code: 'ORDER_ALREADY_COMPLETE', status: 409 });
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: 'SOLD' });
  });

  it("lets an admin cancel anyone's order", async () => {
    const petId = await stockedPet(t, 1);
    const id = (await placeOrder(t, alice, petId, 1)).data?.placeOrder.id;
    const result = await gql(t.url, `mutation { cancelOrder(id: "${id}") }`, undefined, { key: t.adminKey });
    expect(result.data).toEqual({ cancelOrder: id });
  });
});

describe('isolation between clients', () => {
  it("shows another client's order exactly like an unknown one, on every order operation", async () => {
    const petId = await stockedPet(t, 5);
    const id = (await placeOrder(t, alice, petId, 1)).data?.placeOrder.id;
    const unknownId = '987654321';
    for (const target of [id, unknownId]) {
      const read = await gql(t.url, `{ order(id: "${target}") { id } }`, undefined, { key: bob });
      expect(read.body).toEqual({ data: { order: null }, extensions: { cost: { requested: 2, actual: 2, limit: 1000 } } });
      const cancel = await gql(t.url, `mutation { cancelOrder(id: "${target}") }`, undefined, { key: bob });
      expect(cancel.errors?.map(({ message, extensions }) => ({ message: message.replace(target, 'X'), extensions }))).toEqual([
        { message: 'Order X not found', extensions: { code: 'NOT_FOUND', status: 404 } },
      ]);
    }
    const list = await gql(t.url, 'query($petId: ID) { orders(filter: { petId: $petId }) { totalCount nodes { id } } }', { petId }, { key: bob });
    expect(list.data?.orders).toEqual({ totalCount: 0, nodes: [] });
    const own = await gql(t.url, 'query($petId: ID) { orders(filter: { petId: $petId }) { totalCount } }', { petId }, { key: alice });
    expect(own.data?.orders.totalCount).toBe(1);
    expect(await stockOf(t, petId)).toEqual({ quantity: 4, status: 'AVAILABLE' });
  });

  it('needs a key to read orders at all', async () => {
    expect((await gql(t.url, '{ orders { totalCount } }')).errors?.[0].extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
    expect((await gql(t.url, '{ order(id: "1") { id } }')).errors?.[0].extensions).toEqual({ code: 'UNAUTHENTICATED', status: 401 });
  });
});

describe('orders and inventory queries', () => {
  it('lists orders newest first with filters and cursors; an admin sees every order', async () => {
    const petId = await stockedPet(t, 10);
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) ids.push((await placeOrder(t, alice, petId, 1)).data?.placeOrder.id);
    await gql(t.url, `mutation { completeOrder(id: "${ids[0]}") { id } }`, undefined, { key: t.adminKey });
    const bobs = (await placeOrder(t, bob, petId, 1)).data?.placeOrder.id;

    const query = 'query($f: OrderFilter, $after: String) { orders(first: 2, after: $after, filter: $f) { nodes { id pet { id } } pageInfo { hasNextPage endCursor } totalCount } }';
    const page1 = await gql(t.url, query, { f: { petId } }, { key: alice });
    expect(page1.data?.orders.nodes.map((n: any) => n.id)).toEqual([ids[3], ids[2]]);
    expect(page1.data?.orders.nodes[0].pet.id).toBe(petId);
    expect(page1.data?.orders.totalCount).toBe(4);
    const page2 = await gql(t.url, query, { f: { petId }, after: page1.data?.orders.pageInfo.endCursor }, { key: alice });
    expect(page2.data?.orders.nodes.map((n: any) => n.id)).toEqual([ids[1], ids[0]]);
    expect(page2.data?.orders.pageInfo.hasNextPage).toBe(false);

    const open = await gql(t.url, query, { f: { petId, complete: false } }, { key: alice });
    expect(open.data?.orders.totalCount).toBe(3);
    const complete = await gql(t.url, query, { f: { petId, complete: true } }, { key: alice });
    expect(complete.data?.orders.nodes.map((n: any) => n.id)).toEqual([ids[0]]);

    const all = await gql(t.url, query, { f: { petId } }, { key: t.adminKey });
    expect(all.data?.orders.totalCount).toBe(5);
    expect(all.data?.orders.nodes[0].id).toBe(bobs);
  });

  it('lists stock in pet id order, filtered by derived status', async () => {
    const available = await stockedPet(t, 4, 'Stocked');
    const sold = await stockedPet(t, 0, 'Gone');
    const result = await gql(t.url, '{ inventory(first: 100, filter: { status: SOLD }) { nodes { petId status pet { name } } totalCount } }');
    const petIds = result.data?.inventory.nodes.map((n: any) => n.petId);
    expect(petIds).toContain(sold);
    expect(petIds).not.toContain(available);
    expect(result.data?.inventory.nodes.every((n: any) => n.status === 'SOLD')).toBe(true);
    expect([...petIds].sort((a: string, b: string) => Number(a) - Number(b))).toEqual(petIds);
    expect((await gql(t.url, '{ inventoryItem(petId: "424242") { quantity } }')).data).toEqual({ inventoryItem: null });
  });
});

describe('updateInventory', () => {
  it('sets the count and derives the status: PENDING at 0 while an order is open', async () => {
    const petId = await stockedPet(t, 5);
    await placeOrder(t, alice, petId, 1);
    const zero = await gql(t.url, `mutation { updateInventory(petId: "${petId}", input: { quantity: 0 }) { quantity status } }`, undefined, { key: t.adminKey });
    expect(zero.data?.updateInventory).toEqual({ quantity: 0, status: 'PENDING' });
    const max = await gql(t.url, `mutation { updateInventory(petId: "${petId}", input: { quantity: 1000000 }) { quantity status } }`, undefined, { key: t.adminKey });
    expect(max.data?.updateInventory).toEqual({ quantity: 1000000, status: 'AVAILABLE' });
  });

  it('refuses out-of-bounds counts, unknown pets and non-admins', async () => {
    const petId = await stockedPet(t, 5);
    for (const quantity of [-1, 1000001]) {
      const result = await gql(t.url, `mutation { updateInventory(petId: "${petId}", input: { quantity: ${quantity} }) { quantity } }`, undefined, { key: t.adminKey });
      expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    }
    expect(codes(await gql(t.url, 'mutation { updateInventory(petId: "777777", input: { quantity: 1 }) { quantity } }', undefined, { key: t.adminKey }))).toEqual(['NOT_FOUND']);
    expect(codes(await gql(t.url, `mutation { updateInventory(petId: "${petId}", input: { quantity: 1 }) { quantity } }`, undefined, { key: alice }))).toEqual(['FORBIDDEN']);
    expect(await stockOf(t, petId)).toEqual({ quantity: 5, status: 'AVAILABLE' });
  });
});

it('refuses to delete a pet that has orders with PET_HAS_ORDERS', async () => {
  const petId = await stockedPet(t, 5);
  await placeOrder(t, alice, petId, 1);
  const result = await gql(t.url, `mutation { deletePet(id: "${petId}") }`, undefined, { key: t.adminKey });
  expect(result.errors?.[0].extensions).toEqual({ code: 'PET_HAS_ORDERS', status: 409 });
});
