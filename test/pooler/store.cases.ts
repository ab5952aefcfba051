import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, placeOrder, stockedPet, stockOf, ordersFor } from '../helpers/builders';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { codes, gql } from '../helpers/gql';
import { openPooled, type PgBouncer, pooledEnv, startPgBouncer, withPgBouncer } from '../helpers/pgbouncer';

withPgBouncer('the store behind PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  let direct: TestDatabase;
  let pooled: TestDatabase;
  let t: TestApp;
  beforeAll(async () => {
    // Ten client connections share four server sessions: consecutive statements of one client
    // land on different sessions, as they do when instances × pool outgrow max_connections.
    bouncer = await startPgBouncer(process.env.DATABASE_URL as string, { serverPoolSize: 4 });
    direct = await createTestDatabase();
    pooled = await openPooled(bouncer, direct);
    t = await startTestApp(pooledEnv(bouncer, direct), { db: pooled, limitInFlight: false });
  });
  afterAll(async () => {
    await t?.close();
    await pooled?.close();
    await direct?.close();
    await bouncer?.stop();
  });

  const buyer = async () => (await createApiKey(t, { name: 'buyer', plan: 'PRO' })).key;

  it('never oversells: 50 concurrent orders of 1 against a stock of 10', async () => {
    const petId = await stockedPet(t, 10);
    const keys = await Promise.all(Array.from({ length: 5 }, buyer));
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => placeOrder(t, keys[i % keys.length], petId, 1)));
    expect(results.filter((result) => result.data?.placeOrder)).toHaveLength(10);
    expect(results.flatMap(codes)).toEqual(Array(40).fill('INSUFFICIENT_STOCK'));
    expect(await ordersFor(t, petId)).toBe(10);
    expect(await stockOf(t, petId)).toEqual({ quantity: 0, status: 'PENDING' });
  });

  it('ends 20 concurrent retries with one idempotency key in one order, taking stock once', async () => {
    const buyerKey = await buyer();
    const petId = await stockedPet(t, 10);
    const results = await Promise.all(Array.from({ length: 20 }, () => placeOrder(t, buyerKey, petId, 3, 'pooled-retry')));
    const ids = new Set(results.flatMap((result) => (result.data?.placeOrder ? [result.data.placeOrder.id] : [])));
    expect(results.flatMap(codes).filter((code) => code !== 'RATE_LIMITED')).toEqual([]);
    expect(ids.size).toBe(1);
    expect(await ordersFor(t, petId)).toBe(1);
    expect(await stockOf(t, petId)).toEqual({ quantity: 7, status: 'AVAILABLE' });
  });

  it('serves the hot reads again and again across server sessions, preparing no named statement', async () => {
    const query = '{ pets(first: 5) { totalCount edges { node { id name category { name } } } } }';
    const results = await Promise.all(Array.from({ length: 60 }, () => gql(t.url, query, undefined, { key: t.adminKey })));
    expect(results.flatMap((result) => result.errors ?? [])).toEqual([]);
    expect(new Set(results.map((result) => result.data?.pets.totalCount)).size).toBe(1);
  });
});
