import { generateApiKey } from '../../src/auth/key-secret';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, placeOrder, stockedPet } from '../helpers/builders';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { gql } from '../helpers/gql';
import { liveSession, subscribed } from '../helpers/live';
import { openPooled, type PgBouncer, pooledEnv, startPgBouncer, withPgBouncer } from '../helpers/pgbouncer';

withPgBouncer('live updates across two instances behind PgBouncer', () => {
  let bouncer: PgBouncer;
  let direct: TestDatabase;
  const pooled: TestDatabase[] = [];
  let a: TestApp;
  let b: TestApp;
  const live = liveSession();
  beforeAll(async () => {
    bouncer = await startPgBouncer(process.env.DATABASE_URL as string, { serverPoolSize: 3 });
    direct = await createTestDatabase();
    // Two instances, each with a pool of its own through the pooler, as two processes would have.
    pooled.push(await openPooled(bouncer, direct), await openPooled(bouncer, direct));
    // One deployment: the same admin key and limiter state on both.
    const env = { ...pooledEnv(bouncer, direct), ADMIN_API_KEY: generateApiKey() };
    const prefix = `pooler-live-${Date.now()}`;
    a = await startTestApp(env, { db: pooled[0], limiterKeyPrefix: prefix });
    b = await startTestApp(env, { db: pooled[1], limiterKeyPrefix: prefix });
  });
  afterEach(() => live.closeAll());
  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const database of pooled) await database.close();
    await direct?.close();
    await bouncer?.stop();
  });

  it('delivers a stock change and an order made on one instance to subscribers of the other', async () => {
    const petId = await stockedPet(a, 5);
    const buyer = (await createApiKey(a, { name: 'buyer', plan: 'PRO' })).key;
    const client = live.client(b, b.adminKey);
    const stock = live.watch(client, 'subscription($ids: [ID!]) { inventoryChanged(petIds: $ids) { petId quantity } }', { ids: [petId] });
    const orders = live.watch(client, 'subscription { orderChanged { kind order { petId quantity } } }');
    await subscribed(b, 2);

    await gql(a.url, 'mutation($p: ID!) { updateInventory(petId: $p, input: { quantity: 8 }) { quantity } }', { p: petId }, { key: a.adminKey });
    expect((await placeOrder(a, buyer, petId, 3)).errors).toBeUndefined();

    await stock.until(2);
    await orders.until(1);
    expect(stock.events.map((event) => event.data?.inventoryChanged.quantity)).toEqual([8, 5]);
    expect(orders.events[0].data?.orderChanged).toEqual({ kind: 'PLACED', order: { petId, quantity: 3 } });
  });
});
