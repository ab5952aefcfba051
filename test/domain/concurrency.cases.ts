import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, placeOrder, stockedPet, stockOf, ordersFor } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';
import { printFigure } from '../helpers/figures';

let t: TestApp;
beforeAll(async () => {
  // Concurrency in the database is the subject: more requests at once than the in-flight bound admits.
  t = await startTestApp({}, { limitInFlight: false });
});
afterAll(() => t.close());

/** placeOrder is limited to 10 a minute per key: each test buys with keys of its own. */
const buyer = async () => (await createApiKey(t, { name: 'buyer', plan: 'PRO' })).key;

it('never oversells: 50 concurrent orders of 1 against a stock of 10', async () => {
  const petId = await stockedPet(t, 10);
  const keys = await Promise.all(Array.from({ length: 5 }, buyer));
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => placeOrder(t, keys[i % keys.length], petId, 1)));
  const placed = results.filter((result) => result.data?.placeOrder);
  const refused = results.flatMap(codes);
  // On a busy machine a few may be refused before any statement runs, for their key's share of
  // the pool (RATE_LIMITED, which takes nothing); every other one met the stock.
  const early = refused.filter((code) => code === 'RATE_LIMITED').length;
  expect(placed).toHaveLength(10);
  expect(refused).toHaveLength(40);
  expect(refused.filter((code) => code !== 'RATE_LIMITED')).toEqual(Array(40 - early).fill('INSUFFICIENT_STOCK'));
  expect(await ordersFor(t, petId)).toBe(10);
  expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: 'PENDING' });
  printFigure(`50 concurrent placeOrder on stock 10: ${placed.length} placed, ${refused.length - early} INSUFFICIENT_STOCK, ${early} refused for the pool, stock left ${(await stockOf(t, petId)).quantity}`);
});

describe('idempotency keys', () => {
  it('returns the same order to a retry with the same key and input, taking stock once', async () => {
    const buyerKey = await buyer();
    const petId = await stockedPet(t, 5);
    const first = await placeOrder(t, buyerKey, petId, 2, 'order-001');
    const retry = await placeOrder(t, buyerKey, petId, 2, 'order-001');
    expect(retry.data?.placeOrder).toEqual(first.data?.placeOrder);
    expect(await stockOf(t, petId)).toEqual({ quantity: 3, status: 'AVAILABLE' });
    expect(await ordersFor(t, petId)).toBe(1);
  });

  it('refuses the same key with different input with IDEMPOTENCY_KEY_REUSED', async () => {
    const buyerKey = await buyer();
    const petId = await stockedPet(t, 5);
    await placeOrder(t, buyerKey, petId, 1, 'order-002');
    const other = await placeOrder(t, buyerKey, petId, 2, 'order-002');
    expect(other.errors?.[0].extensions).toEqual({ code: 'IDEMPOTENCY_KEY_REUSED', status: 409 });
    const otherDate = await placeOrder(t, buyerKey, petId, 1, 'order-002', '2030-01-01T00:00:00Z');
    expect(codes(otherDate)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
    expect(await stockOf(t, petId)).toEqual({ quantity: 4, status: 'AVAILABLE' });
  });

  it('scopes keys to the API key that sends them', async () => {
    const buyerKey = await buyer();
    const otherKey = await buyer();
    const petId = await stockedPet(t, 5);
    const mine = await placeOrder(t, buyerKey, petId, 1, 'shared-name');
    const theirs = await placeOrder(t, otherKey, petId, 1, 'shared-name');
    expect(theirs.data?.placeOrder.id).not.toBe(mine.data?.placeOrder.id);
    expect(await stockOf(t, petId)).toEqual({ quantity: 3, status: 'AVAILABLE' });
  });

  it('ends 20 concurrent retries with one key in one order, taking stock once', async () => {
    const buyerKey = await buyer();
    const petId = await stockedPet(t, 10);
    const results = await Promise.all(Array.from({ length: 20 }, () => placeOrder(t, buyerKey, petId, 3, 'burst-retry')));
    const ids = new Set(results.flatMap((result) => (result.data?.placeOrder ? [result.data.placeOrder.id] : [])));
    expect(results.flatMap(codes).filter((code) => code !== 'RATE_LIMITED')).toEqual([]);
    const answered = results.filter((result) => result.data?.placeOrder);
    expect(answered.length).toBeGreaterThan(0);
    expect(ids.size).toBe(1);
    expect(await ordersFor(t, petId)).toBe(1);
    expect(await stockOf(t, petId)).toEqual({ quantity: 7, status: 'AVAILABLE' });
    const limited = results.filter((result) => codes(result)[0] === 'RATE_LIMITED').length;
    printFigure(
      `20 concurrent retries with one idempotency key: ${answered.length} answered with ${ids.size} order (${limited} refused by placeOrder's 10-a-minute limit), stock 10 → 7`,
    );
  });

  it('does not remember a refused attempt: a retry after restocking places the order', async () => {
    const buyerKey = await buyer();
    const petId = await stockedPet(t, 0);
    expect(codes(await placeOrder(t, buyerKey, petId, 1, 'after-restock'))).toEqual(['INSUFFICIENT_STOCK']);
    await gql(t.url, `mutation { updateInventory(petId: "${petId}", input: { quantity: 2 }) { quantity } }`, undefined, { key: t.adminKey });
    const retry = await placeOrder(t, buyerKey, petId, 1, 'after-restock');
    expect(retry.data?.placeOrder.quantity).toBe(1);
  });

  it('answers a retry of a cancelled order with NOT_FOUND, taking no stock again', async () => {
    const buyerKey = await buyer();
    const petId = await stockedPet(t, 3);
    const id = (await placeOrder(t, buyerKey, petId, 1, 'cancel-me')).data?.placeOrder.id;
    await gql(t.url, `mutation { cancelOrder(id: "${id}") }`, undefined, { key: buyerKey });
    const retry = await placeOrder(t, buyerKey, petId, 1, 'cancel-me');
    expect(retry.errors?.[0]).toMatchObject({ message: 'The order placed with idempotency key "cancel-me" was cancelled', extensions: { code: 'NOT_FOUND' } });
    expect(await stockOf(t, petId)).toEqual({ quantity: 3, status: 'AVAILABLE' });
  });

  it('forgets keys after 24 hours', async () => {
    const buyerKey = await buyer();
    const petId = await stockedPet(t, 5);
    const first = (await placeOrder(t, buyerKey, petId, 1, 'yesterday')).data?.placeOrder.id;
    await t.db.dataSource.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'yesterday'");
    const next = (await placeOrder(t, buyerKey, petId, 1, 'yesterday')).data?.placeOrder.id;
    expect(next).not.toBe(first);
    expect(await stockOf(t, petId)).toEqual({ quantity: 3, status: 'AVAILABLE' });
  });

  it.each([[''], ['k'.repeat(256)]])('refuses the key %p with BAD_USER_INPUT', async (idempotencyKey) => {
    const buyerKey = await buyer();
    const petId = await stockedPet(t, 5);
    const result = await placeOrder(t, buyerKey, petId, 1, idempotencyKey);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    expect(await stockOf(t, petId)).toEqual({ quantity: 5, status: 'AVAILABLE' });
  });
});
