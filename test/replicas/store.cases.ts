import { createApiKey, ordersFor, placeOrder, stockedPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';
import { parseLsn } from '../../src/sql/lsn';
import { replicaAt, type Replication, startReplication, withReplication } from '../helpers/replication';

withReplication('the store with a read replica 500 ms behind, across two instances', () => {
  let r: Replication;
  beforeAll(async () => {
    r = await startReplication();
  }, 120_000);
  afterAll(async () => {
    await r?.close();
  });

  const buyer = async () => (await createApiKey(r.instances[0], { name: 'buyer', plan: 'ENTERPRISE', requestsPerMinute: 100_000, requestsPerDay: 1_000_000 })).key;
  /** The furthest X-Read-After of `answers`: once the replica has replayed it, it holds all their writes. */
  const furthest = (answers: { headers: Record<string, string> }[]) =>
    answers.map((answer) => answer.headers['x-read-after']).reduce((a, b) => ((parseLsn(b) ?? 0n) > (parseLsn(a) ?? 0n) ? b : a));
  const stockAs = async (key: string, petId: string, on = r.instances[1]) =>
    (await gql(on.url, 'query($id: ID!) { inventoryItem(petId: $id) { quantity status } }', { id: petId }, { key })).data?.inventoryItem;

  it('never oversells: 50 concurrent orders of 1 on two instances against a stock of 10', async () => {
    const [a, b] = r.instances;
    const petId = await stockedPet(a, 10);
    const keys = await Promise.all(Array.from({ length: 5 }, buyer));
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => placeOrder(i % 2 === 0 ? a : b, keys[i % keys.length], petId, 1)));
    expect(results.filter((result) => result.data?.placeOrder)).toHaveLength(10);
    expect(results.flatMap(codes)).toEqual(Array(40).fill('INSUFFICIENT_STOCK'));
    expect(await ordersFor(a, petId)).toBe(10);
    // A buyer reads its own last write at once; the replica, once caught up, shows the same.
    expect(await stockAs(keys[0], petId)).toEqual({ quantity: 0, status: 'PENDING' });
    await replicaAt(b, furthest(results));
    const reader = await buyer();
    expect(await stockAs(reader, petId)).toEqual({ quantity: 0, status: 'PENDING' });
  });

  it('ends 20 concurrent retries with one idempotency key on two instances in one order, taking stock once', async () => {
    const [a, b] = r.instances;
    const buyerKey = await buyer();
    const petId = await stockedPet(a, 10);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => placeOrder(i % 2 === 0 ? a : b, buyerKey, petId, 3, 'replicated-retry')));
    const ids = new Set(results.flatMap((result) => (result.data?.placeOrder ? [result.data.placeOrder.id] : [])));
    expect(results.flatMap(codes).filter((code) => code !== 'RATE_LIMITED')).toEqual([]);
    expect(ids.size).toBe(1);
    expect(await ordersFor(a, petId)).toBe(1);
    expect(await stockAs(buyerKey, petId)).toEqual({ quantity: 7, status: 'AVAILABLE' });
  });

  it("lists a buyer's order over REST on the other instance right after placing it", async () => {
    const [a, b] = r.instances;
    const buyerKey = await buyer();
    const petId = await stockedPet(a, 5);
    for (let round = 0; round < 5; round += 1) {
      const placed = await placeOrder(round % 2 === 0 ? a : b, buyerKey, petId, 1);
      const other = round % 2 === 0 ? b : a;
      // The other instance knows the buyer's position from Redis, or from the header sent back.
      const readAfter: Record<string, string> = process.env.REDIS_URL ? {} : { 'X-Read-After': placed.headers['x-read-after'] };
      const response = await fetch(`${other.url}/store/orders?limit=100`, { headers: { 'X-API-Key': buyerKey, Accept: 'application/json', ...readAfter } });
      expect(response.status).toBe(200);
      const orders = (await response.json()) as { id: number | string }[];
      expect(orders.map(({ id }) => String(id))).toContain(String(placed.data?.placeOrder.id));
    }
  });
});
