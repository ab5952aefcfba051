import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, caughtUp, eventually, liveSession, subscribed } from '../helpers/live';

let t: TestApp;
const live = liveSession();
const { watch } = live;
beforeAll(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await live.closeAll();
  await eventually(async () => (await activeSubscriptions(t)) === 0);
});
afterAll(() => t.close());

const client = (key?: string) => live.client(t, key);
const admin = () => ({ key: t.adminKey });

const INVENTORY = 'subscription($petIds: [ID!]) { inventoryChanged(petIds: $petIds) { petId quantity status } }';
const PETS = 'subscription($ids: [ID!]) { petChanged(ids: $ids) { kind id pet { id name category { name } } } }';
const ORDERS = 'subscription { orderChanged { kind id order { id petId quantity complete } } }';

describe('inventoryChanged', () => {
  it("sends the pet's stock after placeOrder, cancelOrder, completeOrder and updateInventory, for the listed pets only", async () => {
    const petId = await stockedPet(t, 5);
    const other = await stockedPet(t, 5, 'Other');
    const { key } = await createApiKey(t, { plan: 'PRO' });
    await caughtUp(t);
    const feed = watch(client(), INVENTORY, { petIds: [petId] });
    const all = watch(client(), INVENTORY);
    await subscribed(t, 2);

    const placed = await placeOrder(t, key, petId, 2);
    const orderId = placed.data?.placeOrder.id;
    await gql(t.url, `mutation { cancelOrder(id: "${orderId}") }`, undefined, { key });
    const second = (await placeOrder(t, key, petId, 5)).data?.placeOrder.id;
    await gql(t.url, `mutation { completeOrder(id: "${second}") { id } }`, undefined, admin());
    await setStock(t, petId, 7);
    await setStock(t, other, 1);

    // A last change as a marker: events arrive in commit order, so nothing else may come before it.
    await setStock(t, petId, 8);
    await feed.until(6);
    await all.until(7);
    expect(feed.events.map((event) => event.data?.inventoryChanged)).toEqual([
      { petId, quantity: 3, status: 'AVAILABLE' },
      { petId, quantity: 5, status: 'AVAILABLE' },
      { petId, quantity: 0, status: 'PENDING' },
      { petId, quantity: 0, status: 'SOLD' },
      { petId, quantity: 7, status: 'AVAILABLE' },
      { petId, quantity: 8, status: 'AVAILABLE' },
    ]);
    expect(all.events.map((event) => event.data?.inventoryChanged.petId)).toEqual([petId, petId, petId, petId, petId, other, petId]);
  });

  it('publishes nothing for a change that fails and rolls back', async () => {
    const petId = await stockedPet(t, 2);
    const { key } = await createApiKey(t, { plan: 'PRO' });
    await caughtUp(t);
    const feed = watch(client(), INVENTORY, { petIds: [petId] });
    await subscribed(t, 1);

    const refused = await placeOrder(t, key, petId, 3);
    expect(refused.errors?.[0].extensions.code).toBe('INSUFFICIENT_STOCK');
    const invalid = await gql(t.url, `mutation { updateInventory(petId: "${petId}", input: { quantity: -1 }) { quantity } }`, undefined, admin());
    expect(invalid.errors?.[0].extensions.code).toBe('BAD_USER_INPUT');
    await setStock(t, petId, 9);
    await setStock(t, petId, 4); // a marker: anything the refused changes published would come before it

    await feed.until(2);
    expect(feed.events.map((event) => event.data?.inventoryChanged.quantity)).toEqual([9, 4]);
  });
});

describe('petChanged', () => {
  it('sends CREATED, UPDATED and DELETED with the pet as it is now (null once deleted), filtered by id', async () => {
    const category = await createCategory(t, 'Birds');
    // Renamed last, as a marker both feeds receive: nothing wrongly sent may come after it.
    const markerId = await createPet(t, category, 'Marker');
    await caughtUp(t);
    const all = watch(client(), PETS);
    await subscribed(t, 1);
    const petId = await createPet(t, category, 'Tweety');
    await caughtUp(t);
    const only = watch(client(), PETS, { ids: [petId, markerId] });
    await subscribed(t, 2);
    const otherId = await createPet(t, category, 'Polly');
    // An event carries the pet as it is when the event is delivered: each change waits for the
    // last one's events, so that each shows the pet as that change left it.
    await all.until(2);
    await gql(t.url, `mutation { updatePet(id: "${petId}", input: { name: "Tweetie" }) { id } }`, undefined, admin());
    await Promise.all([all.until(3), only.until(1)]);
    await gql(t.url, `mutation { deletePet(id: "${petId}") }`, undefined, admin());
    await gql(t.url, `mutation { updatePet(id: "${markerId}", input: { name: "Marked" }) { id } }`, undefined, admin());

    await all.until(5);
    await only.until(3);
    expect(all.events.map((event) => event.data?.petChanged)).toEqual([
      { kind: 'CREATED', id: petId, pet: { id: petId, name: 'Tweety', category: { name: 'Birds' } } },
      { kind: 'CREATED', id: otherId, pet: { id: otherId, name: 'Polly', category: { name: 'Birds' } } },
      { kind: 'UPDATED', id: petId, pet: { id: petId, name: 'Tweetie', category: { name: 'Birds' } } },
      { kind: 'DELETED', id: petId, pet: null },
      { kind: 'UPDATED', id: markerId, pet: { id: markerId, name: 'Marked', category: { name: 'Birds' } } },
    ]);
    expect(only.events.map((event) => [event.data?.petChanged.kind, event.data?.petChanged.id])).toEqual([
      ['UPDATED', petId],
      ['DELETED', petId],
      ['UPDATED', markerId],
    ]);
  });

  it('gives subscribers of one event the result of their own selection and variables', async () => {
    const category = await createCategory(t, 'Fish');
    const first = await createPet(t, category, 'Nemo');
    await createPet(t, category, 'Dory');
    await caughtUp(t);
    const BY_PAGE = 'subscription($ids: [ID!], $n: Int) { petChanged(ids: $ids) { id pet { category { pets(first: $n) { nodes { name } } } } } }';
    const one = watch(client(), BY_PAGE, { ids: [first], n: 1 });
    const two = watch(client(), BY_PAGE, { ids: [first], n: 2 });
    const named = watch(client(), 'subscription($ids: [ID!]) { petChanged(ids: $ids) { kind renamed: pet { name } } }', { ids: [first] });
    await subscribed(t, 3);
    await gql(t.url, `mutation { updatePet(id: "${first}", input: { name: "Marlin" }) { id } }`, undefined, admin());
    await Promise.all([one.until(1), two.until(1), named.until(1)]);
    expect(one.events[0].data?.petChanged.pet.category.pets.nodes).toEqual([{ name: 'Marlin' }]);
    expect(two.events[0].data?.petChanged.pet.category.pets.nodes).toEqual([{ name: 'Marlin' }, { name: 'Dory' }]);
    expect(named.events[0].data).toEqual({ petChanged: { kind: 'UPDATED', renamed: { name: 'Marlin' } } });
  });

  it('publishes nothing for a delete refused because the pet has orders', async () => {
    const petId = await stockedPet(t, 3);
    const { key } = await createApiKey(t, { plan: 'PRO' });
    await placeOrder(t, key, petId, 1);
    await caughtUp(t);
    const feed = watch(client(), PETS, { ids: [petId] });
    await subscribed(t, 1);
    const refused = await gql(t.url, `mutation { deletePet(id: "${petId}") }`, undefined, admin());
    expect(refused.errors?.[0].extensions.code).toBe('PET_HAS_ORDERS');
    await gql(t.url, `mutation { updatePet(id: "${petId}", input: { name: "Still here" }) { id } }`, undefined, admin());
    await feed.until(1);
    expect(feed.events.map((event) => [event.data?.petChanged.kind, event.data?.petChanged.pet.name])).toEqual([['UPDATED', 'Still here']]);
  });
});

describe('orderChanged', () => {
  it("gives a client its own orders' events only, and an admin every order's", async () => {
    const petId = await stockedPet(t, 10);
    const alice = await createApiKey(t, { name: 'alice', plan: 'PRO' });
    const bob = await createApiKey(t, { name: 'bob', plan: 'PRO' });
    await caughtUp(t);
    const aliceFeed = watch(client(alice.key), ORDERS);
    const bobFeed = watch(client(bob.key), ORDERS);
    const adminFeed = watch(client(t.adminKey), ORDERS);
    await subscribed(t, 3);

    const first = (await placeOrder(t, alice.key, petId, 2)).data?.placeOrder.id;
    const second = (await placeOrder(t, alice.key, petId, 1)).data?.placeOrder.id;
    // An event reads its order when it is delivered: both PLACED events are out before the order changes.
    await aliceFeed.until(2);
    await adminFeed.until(2);
    await gql(t.url, `mutation { completeOrder(id: "${first}") { id } }`, undefined, admin());
    await gql(t.url, `mutation { cancelOrder(id: "${second}") }`, undefined, { key: alice.key });
    const bobs = (await placeOrder(t, bob.key, petId, 1)).data?.placeOrder.id;
    // Markers: one more order each, last; anything wrongly sent would arrive before them.
    const aliceMarker = (await placeOrder(t, alice.key, petId, 1)).data?.placeOrder.id;
    const bobMarker = (await placeOrder(t, bob.key, petId, 1)).data?.placeOrder.id;

    await aliceFeed.until(5);
    await bobFeed.until(2);
    await adminFeed.until(7);
    expect(aliceFeed.events.pop()?.data?.orderChanged.id).toBe(aliceMarker);
    expect(bobFeed.events.pop()?.data?.orderChanged.id).toBe(bobMarker);
    expect(adminFeed.events.splice(5).map((event) => event.data?.orderChanged.id)).toEqual([aliceMarker, bobMarker]);
    expect(aliceFeed.events.map((event) => event.data?.orderChanged)).toEqual([
      { kind: 'PLACED', id: first, order: { id: first, petId, quantity: 2, complete: false } },
      { kind: 'PLACED', id: second, order: { id: second, petId, quantity: 1, complete: false } },
      { kind: 'COMPLETED', id: first, order: { id: first, petId, quantity: 2, complete: true } },
      { kind: 'CANCELLED', id: second, order: null },
    ]);
    expect(bobFeed.events.map((event) => event.data?.orderChanged)).toEqual([
      { kind: 'PLACED', id: bobs, order: { id: bobs, petId, quantity: 1, complete: false } },
    ]);
    expect(adminFeed.events.map((event) => [event.data?.orderChanged.kind, event.data?.orderChanged.id])).toEqual([
      ['PLACED', first],
      ['PLACED', second],
      ['COMPLETED', first],
      ['CANCELLED', second],
      ['PLACED', bobs],
    ]);
  });

  it('needs a key: an anonymous subscribe gets an UNAUTHENTICATED error and the socket stays open', async () => {
    const anonymous = client();
    const refused = watch(anonymous, ORDERS);
    await refused.until(1);
    expect(refused.error).toEqual([
      expect.objectContaining({ message: expect.stringContaining('API key'), extensions: { code: 'UNAUTHENTICATED', status: 401 } }),
    ]);
    const petId = await stockedPet(t, 1);
    await caughtUp(t);
    const feed = watch(anonymous, INVENTORY, { petIds: [petId] });
    await subscribed(t, 1);
    await setStock(t, petId, 4);
    await feed.until(1);
    expect(feed.events[0].data?.inventoryChanged.quantity).toBe(4);
  });
});

describe('rateLimit.subscriptions', () => {
  it("reports the caller's active subscriptions and the plan's cap", async () => {
    const { key } = await createApiKey(t, { plan: 'PRO' });
    const live = client(key);
    watch(live, INVENTORY);
    watch(live, PETS);
    await subscribed(t, 2);
    const quota = await gql(t.url, '{ rateLimit { subscriptions { active limit } } }', undefined, { key });
    expect(quota.data?.rateLimit.subscriptions).toEqual({ active: 2, limit: 25 });
    const anonymous = await gql(t.url, '{ rateLimit { subscriptions { active limit } } }');
    expect(anonymous.data?.rateLimit.subscriptions).toEqual({ active: 0, limit: 5 });
  });
});
