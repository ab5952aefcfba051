import { randomBytes } from 'node:crypto';
import { CHANGES_CHANNEL } from '../../src/sql/notify';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock } from '../helpers/builders';
import { describeWhen } from '../helpers/services';

/**
 * Two instances of one deployment: one database, one Redis prefix (docs/caching.md, "Two
 * levels"). What one keeps the other serves from Redis; what changes on one is purged on both; a
 * caller that wrote on one reads its write on the other at once.
 */
const withServices = describeWhen(!(process.env.REDIS_URL && process.env.DATABASE_URL) && 'REDIS_URL and DATABASE_URL (services mode)');

withServices('two instances sharing a database and Redis', () => {
  let a: TestApp;
  let b: TestApp;
  let rex: string;
  let buyer: string;
  beforeAll(async () => {
    const prefix = `test:${randomBytes(6).toString('hex')}`;
    a = await startTestApp({}, { limiterKeyPrefix: prefix });
    b = await startTestApp({ ADMIN_API_KEY: a.adminKey }, { db: a.db, limiterKeyPrefix: prefix });
    rex = await createPet(a, await createCategory(a, 'Dogs'), 'Rex');
    await setStock(a, rex, 50);
    buyer = (await createApiKey(a, { plan: 'PRO' })).key;
    await Promise.all([heardAll(a), heardAll(b)]);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** Every change committed so far has reached `on` (NOTIFY delivers in commit order): a marker that purges nothing comes after them. */
  async function heardAll(on: TestApp): Promise<void> {
    const marker = on.app.services.live.hub.orderChanges({ apiKeyId: '0', admin: false });
    await on.db.dataSource.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify({ type: 'order', kind: 'PLACED', id: '1', apiKeyId: '0' })]);
    await marker.next();
    await marker.return?.();
  }

  async function post(on: TestApp, query: string, key = buyer) {
    const response = await fetch(`${on.url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-Key': key }, body: JSON.stringify({ query }) });
    const body = await response.text();
    return { cache: response.headers.get('x-cache'), body, data: JSON.parse(body).data };
  }

  const redisHits = async (on: TestApp) => {
    const metric = await on.app.metrics.registry.getSingleMetric('petstore_response_cache_lookups_total')?.get();
    return (metric?.values ?? []).filter(({ labels }) => labels.result === 'hit' && labels.level === 'redis').reduce((sum, { value }) => sum + value, 0);
  };

  it('serves on B, from Redis, what A kept', async () => {
    const query = `query Kept { pet(id: "${rex}") { id name category { name } } }`;
    const miss = await post(a, query);
    const before = await redisHits(b);
    const hit = await post(b, query);
    expect([miss.cache, hit.cache]).toEqual(['MISS', 'HIT']);
    expect(hit.body).toBe(miss.body);
    expect(await redisHits(b)).toBe(before + 1);
  });

  it('purges on B what a mutation on A changed', async () => {
    const query = `query Purged { pet(id: "${rex}") { name } }`;
    await post(a, query);
    expect((await post(b, query)).cache).toBe('HIT');
    await post(a, `mutation { updatePet(id: "${rex}", input: { name: "Rex II" }) { id } }`, a.adminKey);
    await heardAll(b);
    const after = await post(b, query);
    expect(after.cache).toBe('MISS');
    expect(after.data.pet.name).toBe('Rex II');
  });

  it('shows a key that wrote on A its write on B at once', async () => {
    const query = `query Own { inventoryItem(petId: "${rex}") { quantity } }`;
    await post(b, query);
    const before = await post(b, query);
    expect(before.cache).toBe('HIT');
    const placed = await placeOrder(a, buyer, rex, 3);
    expect(placed.errors).toBeUndefined();
    // No wait for the change to reach B: the write's time, in Redis, already hides the older answer.
    const after = await post(b, query);
    expect(after.cache).not.toBe('HIT');
    expect(after.data.inventoryItem.quantity).toBe(before.data.inventoryItem.quantity - 3);
  });

  it('hides from a key that wrote on A, on B, every answer read before, whatever the write changed', async () => {
    const writer = (await createApiKey(a, { plan: 'PRO' })).key;
    const other = (await createApiKey(a, { plan: 'PRO' })).key;
    const query = `query Unchanged { pet(id: "${rex}") { id name } }`;
    await post(b, query, writer);
    expect((await post(b, query, writer)).cache).toBe('HIT');
    // A write that changes nothing the answer read: no purge can explain a miss, only the write's time in Redis.
    const tom = await createPet(a, await createCategory(a, 'Cats'), 'Tom');
    await setStock(a, tom, 5);
    await heardAll(b);
    expect((await post(b, query, writer)).cache).toBe('HIT');
    expect((await placeOrder(a, writer, tom, 1)).errors).toBeUndefined();
    expect((await post(b, query, writer)).cache).toBe('MISS');
    expect((await post(b, query, other)).cache).toBe('HIT');
  });
});
