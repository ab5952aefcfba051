import { CHANGES_CHANNEL } from '../../src/sql/notify';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { withPostgres } from '../helpers/services';
import { countStatements } from '../helpers/statements';
import { waitFor } from '../helpers/wait';

/**
 * The response cache over HTTP, against the real gateway (docs/caching.md): what a client sees,
 * what a write purges, what a hit still counts, and that a hit reads nothing from the database.
 */
let t: TestApp;
let dogs: string;
let cats: string;
let rex: string;
let tom: string;
let client: { key: string; id: string };
/** The key most reads go with, never writing: an anonymous address has 60 requests a minute. */
let reader: string;

beforeAll(async () => {
  t = await startTestApp();
  [dogs, cats] = [await createCategory(t, 'Dogs'), await createCategory(t, 'Cats')];
  [rex, tom] = [await createPet(t, dogs, 'Rex'), await createPet(t, cats, 'Tom')];
  await setStock(t, rex, 50);
  await setStock(t, tom, 50);
  client = await createApiKey(t, { plan: 'PRO' });
  reader = (await createApiKey(t, { plan: 'ENTERPRISE', requestsPerMinute: 100_000, requestsPerDay: 1_000_000 })).key;
  await heardAll();
});
afterAll(() => t.close());

interface Sent {
  status: number;
  cache: string | null;
  age: string | null;
  headers: Headers;
  body: string;
  json: { data?: Record<string, any>; errors?: { extensions: { code: string } }[]; extensions?: Record<string, unknown> };
}

async function sent(response: Response): Promise<Sent> {
  const body = await response.text();
  return { status: response.status, cache: response.headers.get('x-cache'), age: response.headers.get('age'), headers: response.headers, body, json: JSON.parse(body) };
}

/** A caller: the reader's key by default, ANONYMOUS for none. */
const ANONYMOUS = null;
type Key = string | typeof ANONYMOUS;
const keyed = (key: Key): Record<string, string> => (key ? { 'X-API-Key': key } : {});

function post(query: string, variables: Record<string, unknown> = {}, key: Key = reader, on = t): Promise<Sent> {
  return fetch(`${on.url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...keyed(key) }, body: JSON.stringify({ query, variables }) }).then(sent);
}

function get(query: string, variables: Record<string, unknown> = {}, key: Key = ANONYMOUS): Promise<Sent> {
  const search = new URLSearchParams({ query, variables: JSON.stringify(variables) });
  return fetch(`${t.url}/graphql?${search}`, { headers: { 'Apollo-Require-Preflight': 'true', ...keyed(key) } }).then(sent);
}

/** Every change committed so far has reached the app (NOTIFY delivers in commit order): a marker that purges nothing comes after them. */
async function heardAll(on = t): Promise<void> {
  const marker = on.app.services.live.hub.orderChanges({ apiKeyId: '0', admin: false });
  await on.db.dataSource.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify({ type: 'order', kind: 'PLACED', id: '1', apiKeyId: '0' })]);
  await marker.next();
  await marker.return?.();
}

/** A document no other test sends, so that its first answer is a miss. */
let documents = 0;
const unique = (text: string) => `query Unique${++documents}${text}`;

/** Sends `query` until it is a hit: the first send must be a miss, the second a hit. */
async function warm(query: string, variables: Record<string, unknown> = {}, key: Key = reader): Promise<Sent> {
  const first = await post(query, variables, key);
  expect(first.json.errors).toBeUndefined();
  expect(first.cache).toBe('MISS');
  const second = await post(query, variables, key);
  expect(second.cache).toBe('HIT');
  return second;
}

describe('what a client sees', () => {
  it('answers MISS then HIT with the same bytes, over POST and GET alike, cost included', async () => {
    const query = unique('($id: ID!) { pet(id: $id) { id name status category { id name } inventory { quantity } } }');
    const miss = await post(query, { id: rex }, ANONYMOUS);
    const hit = await post(query, { id: rex }, ANONYMOUS);
    const viaGet = await get(query, { id: rex });
    expect([miss.cache, hit.cache, viaGet.cache]).toEqual(['MISS', 'HIT', 'HIT']);
    expect(miss.json.extensions?.cost).toBeDefined();
    expect(hit.body).toBe(miss.body);
    expect(viaGet.body).toBe(miss.body);
    expect(miss.json.data?.pet).toMatchObject({ id: rex, name: 'Rex' });
  });

  it('caches a GET for a POST too', async () => {
    const query = unique(' { categories { nodes { id name } } }');
    const miss = await get(query);
    const hit = await post(query, {}, ANONYMOUS);
    expect([miss.cache, hit.cache]).toEqual(['MISS', 'HIT']);
    expect(hit.body).toBe(miss.body);
  });

  it('says the age of a hit, and none on a miss', async () => {
    const query = unique(` { pet(id: "${tom}") { name } }`);
    const miss = await post(query);
    const hit = await post(query);
    expect(miss.age).toBeNull();
    expect(Number(hit.age)).toBeGreaterThanOrEqual(0);
    expect(Number(hit.age)).toBeLessThan(60);
  });

  it('names what an answer read in Surrogate-Key and Cache-Tag, on a miss and on a hit', async () => {
    const query = unique(` { pet(id: "${rex}") { id inventory { quantity } } category(id: "${cats}") { id pets { totalCount } } }`);
    const tags = ['category:' + cats, 'pet:' + rex, 'pets', 'stock:' + rex].sort();
    for (const answer of [await post(query), await post(query)]) {
      expect(answer.headers.get('surrogate-key')?.split(' ')).toEqual(tags);
      expect(answer.headers.get('cache-tag')?.split(',')).toEqual(tags);
    }
  });

  it('lets shared caches keep an anonymous catalogue GET, and only the caller one to a key', async () => {
    const query = unique(` { pet(id: "${rex}") { name } }`);
    expect((await get(query)).headers.get('cache-control')).toBe('public, max-age=0, s-maxage=60');
    expect((await get(query)).headers.get('cache-control')).toBe('public, max-age=0, s-maxage=60');
    expect((await get(query, {}, client.key)).headers.get('cache-control')).toBe('private, no-cache');
  });

  it('keys answers by role: a key’s answer is not an anonymous one’s', async () => {
    const query = unique(` { pet(id: "${rex}") { name } }`);
    await warm(query, {}, ANONYMOUS);
    expect((await post(query, {}, client.key)).cache).toBe('MISS');
    expect((await post(query, {}, client.key)).cache).toBe('HIT');
  });

  it('never keeps a private answer: orders, a quota', async () => {
    for (const [query, key] of [
      [unique(' { rateLimit { limit } }'), ANONYMOUS],
      [unique(' { orders { totalCount } }'), client.key],
      [unique(` { pet(id: "${rex}") { name } orders { totalCount } }`), client.key],
    ] as const) {
      for (const answer of [await post(query, {}, key), await post(query, {}, key)]) {
        expect(answer.json.errors).toBeUndefined();
        expect(answer.cache).toBeNull();
        expect(answer.headers.get('surrogate-key')).toBeNull();
      }
    }
  });

  it('never keeps an answer with an error', async () => {
    const query = unique('($first: Int) { pets(first: $first) { totalCount } }');
    for (const answer of [await post(query, { first: 0 }), await post(query, { first: 0 })]) {
      expect(answer.json.errors).toBeDefined();
      expect(answer.cache).toBeNull();
    }
  });
});

describe('purged by what changed', () => {
  /** Warms `reads` and `unrelated`, writes, waits until the write is heard: the reads miss with fresh data, the unrelated still hit. */
  async function purges(write: () => Promise<unknown>, reads: string[], unrelated: string[]): Promise<Sent[]> {
    for (const query of [...reads, ...unrelated]) await warm(query);
    await write();
    await heardAll();
    for (const query of unrelated) expect([query, (await post(query)).cache]).toEqual([query, 'HIT']);
    const after: Sent[] = [];
    for (const query of reads) {
      const answer = await post(query);
      expect([query, answer.cache]).toEqual([query, 'MISS']);
      after.push(answer);
    }
    return after;
  }

  const admin = (query: string, variables: Record<string, unknown>) => async () => {
    const result = await gql(t.url, query, variables, { key: t.adminKey });
    expect(result.errors).toBeUndefined();
    return result;
  };

  it('updatePet purges the pet and the lists of pets, not another pet nor its stock', async () => {
    const [after] = await purges(
      admin('mutation($id: ID!) { updatePet(id: $id, input: { name: "Rex II" }) { id } }', { id: rex }),
      [unique(` { pet(id: "${rex}") { name } }`), unique(' { pets { nodes { name } } }')],
      [unique(` { pet(id: "${tom}") { name } }`), unique(` { category(id: "${dogs}") { name } }`)],
    );
    expect(after.json.data?.pet.name).toBe('Rex II');
  });

  it('updateInventory purges the stock row and the stock list, not the pet', async () => {
    const [after] = await purges(
      admin('mutation($id: ID!) { updateInventory(petId: $id, input: { quantity: 42 }) { quantity } }', { id: rex }),
      [unique(` { inventoryItem(petId: "${rex}") { quantity } }`), unique(' { inventory { nodes { petId quantity } } }')],
      [unique(` { inventoryItem(petId: "${tom}") { quantity } }`), unique(` { pet(id: "${rex}") { id name } }`)],
    );
    expect(after.json.data?.inventoryItem.quantity).toBe(42);
  });

  it('updateCategory purges the category and the list of categories, not another category', async () => {
    const [after] = await purges(
      admin('mutation($id: ID!) { updateCategory(id: $id, input: { description: "Loyal" }) { id } }', { id: dogs }),
      [unique(` { category(id: "${dogs}") { description } }`), unique(' { categories { nodes { id description } } }')],
      [unique(` { category(id: "${cats}") { description } }`), unique(` { pet(id: "${tom}") { id name } }`)],
    );
    expect(after.json.data?.category.description).toBe('Loyal');
  });

  it('createPet purges every list of pets and the id it takes, not another pet', async () => {
    const next = String(Number(tom) + 1000);
    let created = '';
    const after = await purges(
      async () => {
        created = await createPet(t, cats, 'Felix');
      },
      [unique(' { pets { totalCount } }'), unique(` { category(id: "${cats}") { pets { totalCount } } }`)],
      [unique(` { pet(id: "${tom}") { id name } }`), unique(` { pet(id: "${next}") { id } }`)],
    );
    expect(created).not.toBe(next);
    expect(after[1].json.data?.category.pets.totalCount).toBe(2);
  });

  it('deletePet purges the pet, its stock and the lists, not another pet', async () => {
    const gone = await createPet(t, dogs, 'Ghost');
    await heardAll();
    const [after] = await purges(
      admin('mutation($id: ID!) { deletePet(id: $id) }', { id: gone }),
      [unique(` { pet(id: "${gone}") { id name } }`), unique(` { inventoryItem(petId: "${gone}") { quantity } }`), unique(' { pets { nodes { id } } }')],
      [unique(` { pet(id: "${tom}") { id name } }`)],
    );
    expect(after.json.data?.pet).toBeNull();
  });

  it("placeOrder purges the pet's stock, not another's", async () => {
    const before = (await post(unique(` { inventoryItem(petId: "${tom}") { quantity } }`))).json.data?.inventoryItem.quantity;
    const [after] = await purges(
      async () => expect((await placeOrder(t, client.key, tom, 2)).errors).toBeUndefined(),
      [unique(` { inventoryItem(petId: "${tom}") { quantity } }`)],
      [unique(` { inventoryItem(petId: "${rex}") { quantity } }`), unique(` { pet(id: "${tom}") { name } }`)],
    );
    expect(after.json.data?.inventoryItem.quantity).toBe(before - 2);
  });

  // Needs the tables' own triggers to announce a write made outside the gateway.
  it('a write in plain SQL purges what it changed', async () => {
    const [stock, pet] = await purges(
      async () => {
        await t.db.dataSource.query('UPDATE inventory_items SET quantity = 7 WHERE pet_id = $1', [tom]);
        await t.db.dataSource.query("UPDATE pets SET name = 'Thomas' WHERE id = $1", [tom]);
      },
      [unique(` { inventoryItem(petId: "${tom}") { quantity } }`), unique(` { pet(id: "${tom}") { name } }`)],
      [unique(` { pet(id: "${rex}") { id name } }`)],
    );
    expect(stock.json.data?.inventoryItem.quantity).toBe(7);
    expect(pet.json.data?.pet.name).toBe('Thomas');
  });
});

describe("a caller's own writes", () => {
  it('reads its own write at once', async () => {
    const buyer = await createApiKey(t, { plan: 'PRO' });
    const query = unique(` { inventoryItem(petId: "${rex}") { quantity } }`);
    const before = (await warm(query, {}, buyer.key)).json.data?.inventoryItem.quantity;
    // No wait for the change to be heard: the read is never served what the cache held from before.
    expect((await placeOrder(t, buyer.key, rex, 1)).errors).toBeUndefined();
    const read = await post(query, {}, buyer.key);
    expect(read.cache).not.toBe('HIT');
    expect(read.json.data?.inventoryItem.quantity).toBe(before - 1);
    await heardAll();
    expect((await post(query, {}, buyer.key)).json.data?.inventoryItem.quantity).toBe(before - 1);
  });

  it('hides from a caller that wrote every answer read before, whatever the write changed, and from no one else', async () => {
    const buyer = await createApiKey(t, { plan: 'PRO' });
    const other = await createApiKey(t, { plan: 'PRO' });
    const query = unique(` { pet(id: "${rex}") { id name } }`);
    await warm(query, {}, buyer.key);
    // Tom's stock is not what the answer read: no purge can explain a miss, only the caller's write.
    expect((await placeOrder(t, buyer.key, tom, 1)).errors).toBeUndefined();
    await heardAll();
    expect((await post(query, {}, buyer.key)).cache).toBe('MISS');
    expect((await post(query, {}, buyer.key)).cache).toBe('HIT');
    expect((await post(query, {}, other.key)).cache).toBe('HIT');
  });
});

describe('accounting', () => {
  it('counts a hit against the quota', async () => {
    const buyer = await createApiKey(t, { plan: 'FREE' });
    const query = unique(` { pet(id: "${rex}") { name } }`);
    const miss = await post(query, {}, buyer.key);
    const hit = await post(query, {}, buyer.key);
    const again = await post(query, {}, buyer.key);
    expect([miss.cache, hit.cache, again.cache]).toEqual(['MISS', 'HIT', 'HIT']);
    const remaining = [miss, hit, again].map((answer) => Number(answer.headers.get('x-ratelimit-remaining')));
    expect(remaining[1]).toBe(remaining[0] - 1);
    expect(remaining[2]).toBe(remaining[1] - 1);
  });

  it('runs no SQL for a hit', async () => {
    const query = unique(` { pets(first: 5) { totalCount nodes { id name category { name } inventory { quantity } } } }`);
    await warm(query, {}, ANONYMOUS);
    // Pricing reads the catalogue's size at most every few seconds: read now, not during the hit.
    await t.app.services.database.catalogueSize.refresh();
    let hit: Sent | undefined;
    const statements = await countStatements(async () => {
      hit = await post(query, {}, ANONYMOUS);
    });
    expect(hit?.cache).toBe('HIT');
    expect(statements).toEqual([]);
  });

  it('shows lookups and purges in /metrics', async () => {
    const metrics = async () => (await fetch(`${t.url}/metrics`).then((response) => response.text())).split('\n');
    const sum = (lines: string[], name: string, label: string) =>
      lines.filter((line) => line.startsWith(name) && line.includes(label)).reduce((total, line) => total + Number(line.split(' ').pop()), 0);
    const before = await metrics();
    const query = unique(` { pet(id: "${tom}") { id name } }`);
    await warm(query);
    await gql(t.url, 'mutation($id: ID!) { updatePet(id: $id, input: { status: PENDING }) { id } }', { id: tom }, { key: t.adminKey });
    await heardAll();
    const after = await metrics();
    for (const label of ['result="hit"', 'result="miss"']) {
      expect(sum(after, 'petstore_response_cache_lookups_total', label)).toBeGreaterThan(sum(before, 'petstore_response_cache_lookups_total', label));
    }
    expect(sum(after, 'petstore_response_cache_purges_total', 'reason="change"')).toBeGreaterThan(sum(before, 'petstore_response_cache_purges_total', 'reason="change"'));
  });

  it('refuses a document costlier than the limit even when the same one, priced lower before, is cached', async () => {
    // An unindexed substring filter is priced by the catalogue's size: cheap on a few pets, not on a million.
    const query = unique(' { a: pets(first: 1, filter: { nameContains: "e" }) { totalCount } b: pets(first: 2, filter: { nameContains: "e" }) { totalCount } }');
    const cached = await warm(query);
    const size = jest.spyOn(t.app.services.database.catalogueSize, 'current').mockReturnValue(1_000_000);
    try {
      const refused = await post(query);
      expect(refused.json.errors?.map((error) => error.extensions.code)).toEqual(['QUERY_TOO_COMPLEX']);
      expect(refused.json.data).toBeUndefined();
      expect(refused.cache).toBeNull();
    } finally {
      size.mockRestore();
    }
    const again = await post(query);
    expect(again.cache).toBe('HIT');
    expect(again.body).toBe(cached.body);
  });
});

describe('with RESPONSE_CACHE=false', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await startTestApp({ RESPONSE_CACHE: 'false', ADMIN_API_KEY: t.adminKey }, { db: t.db });
  });
  afterAll(() => off.close());

  it('answers the same bytes, with no X-Cache header', async () => {
    const query = unique(` { pet(id: "${rex}") { id name category { name } } pets(first: 2) { nodes { id } } }`);
    const cached = await warm(query);
    for (const answer of [await post(query, {}, reader, off), await post(query, {}, reader, off)]) {
      expect(answer.cache).toBeNull();
      expect(answer.headers.get('surrogate-key')).toBeNull();
      expect(answer.body).toBe(cached.body);
    }
  });
});

// The embedded database's notifications come from the pool itself: there is no listening connection to lose.
withPostgres('when the change stream is lost', () => {
  let own: TestApp;
  beforeAll(async () => {
    own = await startTestApp({ ADMIN_API_KEY: t.adminKey }, { db: t.db });
  });
  afterAll(() => own.close());

  it('bypasses the cache until it listens again, then refuses everything kept before', async () => {
    const query = unique(` { pet(id: "${rex}") { id name } }`);
    const status = async () => (await post(query, {}, reader, own)).cache;
    expect(await status()).toBe('MISS');
    expect(await status()).toBe('HIT');
    // Every listening connection of the database ends: the other app's as well, which listens again on its own.
    await own.db.dataSource.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'");
    await waitFor(async () => (await status()) === 'BYPASS', 10_000, 'a bypass once the stream is lost');
    let after: string | null = 'BYPASS';
    await waitFor(async () => (after = await status()) !== 'BYPASS', 10_000, 'the stream back');
    // Computed again (what was kept before may have missed a change), then kept.
    expect(after).toBe('MISS');
    expect(await status()).toBe('HIT');
  });
});
