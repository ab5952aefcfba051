import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { sharedChromium, screenshotFolder, snap } from './browser';
import { type Shop, type ShopFront, shopScript, startShop } from './shop-server';

/**
 * Conditional requests from a real browser (docs/contract.md §10): Chromium's HTTP cache keeps a
 * GET answer with its ETag and, told `no-cache`, revalidates it with If-None-Match before each
 * reuse. The server answers 304, the browser hands the page its cached 200, and the quota the
 * page sees in the 304's headers is unspent. Both through the page's own `fetch` and through
 * Apollo Client sending queries by GET (`useGETForQueries`), from a shop on another origin.
 */
const PET_QUERY = 'query PetName($id: ID!) { pet(id: $id) { id name } }';

let t: TestApp;
let browser: Browser;
let page: Page;
let shop: Shop;
let front: ShopFront = { html: '', script: '' };
let petId: string;
const folder = screenshotFolder('conditional-requests');

/** What the server answered, request by request, as its own log would list it. */
interface Seen {
  path: string;
  ifNoneMatch?: string;
  status: number;
}
let seen: Seen[] = [];

async function shopFront(gateway: string, key: string): Promise<ShopFront> {
  const source = `
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';

const client = new ApolloClient({
  link: new HttpLink({ uri: ${JSON.stringify(`${gateway}/graphql`)}, useGETForQueries: true, headers: { 'X-API-Key': ${JSON.stringify(key)} } }),
  cache: new InMemoryCache(),
});
const show = (text) => { document.querySelector('#shown').textContent = text; return text; };
// Asked of the network each time, as a page that polls would: the browser's cache revalidates.
window.queryPet = async (id) => {
  const { data } = await client.query({ query: gql(${JSON.stringify(PET_QUERY)}), variables: { id }, fetchPolicy: 'network-only' });
  return show('Apollo Client: ' + data.pet.name);
};
window.fetchPet = async (id) => {
  const response = await fetch(${JSON.stringify(gateway)} + '/pets/' + id);
  const pet = await response.json();
  show('fetch: ' + response.status + ' ' + pet.name + ', quota left ' + response.headers.get('X-RateLimit-Remaining'));
  return { status: response.status, name: pet.name, etag: response.headers.get('ETag'), remaining: response.headers.get('X-RateLimit-Remaining') };
};
show('ready');
`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pet shop</title><link rel="icon" href="data:,">
</head><body style="font-family: sans-serif">
<h1>Revalidating</h1><p id="shown">Loading…</p>
<script type="module" src="/shop.js"></script>
</body></html>`;
  return { html, script: await shopScript(source) };
}

/** What the shop's page offers the test: its window's two ways of asking for a pet. */
interface ShopWindow {
  fetchPet(id: string): Promise<{ status: number; name: string; etag: string; remaining: string }>;
  queryPet(id: string): Promise<string>;
}

async function rename(name: string): Promise<void> {
  const result = await gql(t.url, 'mutation($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', { id: petId, name }, { key: t.adminKey });
  expect(result.data?.updatePet).toEqual({ name });
}

/** The server's answers to GETs of `path` (preflights aside) since the last call. */
function answered(path: string): Omit<Seen, 'path'>[] {
  const mine = seen.filter((entry) => entry.path.startsWith(path)).map(({ ifNoneMatch, status }) => (ifNoneMatch === undefined ? { status } : { ifNoneMatch, status }));
  seen = [];
  return mine;
}

beforeAll(async () => {
  browser = await sharedChromium();
  shop = await startShop(() => front);
  t = await startTestApp({ CORS_ORIGINS: shop.origin });
  t.server.on('request', (req, res) => {
    if (req.method !== 'GET') return;
    const ifNoneMatch = req.headers['if-none-match'];
    res.on('finish', () => seen.push({ path: req.url ?? '', status: res.statusCode, ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }) }));
  });
  petId = await createPet(t, await createCategory(t, 'Dogs'), 'Rex');
  const { key } = await createApiKey(t, { plan: 'FREE' });
  front = await shopFront(t.url, key);
  page = await browser.newPage({ viewport: { width: 640, height: 240 } });
  await page.goto(`${shop.origin}/`);
  await page.getByText('ready').waitFor();
});
afterAll(async () => {
  await page?.close();
  await t?.close();
  await shop?.close();
});

it("revalidates the page's fetch of a pet: 304 at the server, the cached 200 to the page, its quota unspent", async () => {
  const fetchPet = () => page.evaluate((id) => (globalThis as unknown as ShopWindow).fetchPet(id), petId);
  seen = [];
  const first = await fetchPet();
  await snap(page, folder, 'fetch-first');
  const again = await fetchPet();
  await snap(page, folder, 'fetch-revalidated');
  expect(first).toMatchObject({ status: 200, name: 'Rex' });
  expect(again).toEqual({ ...first, remaining: first.remaining });
  expect(answered(`/pets/${petId}`)).toEqual([{ status: 200 }, { ifNoneMatch: first.etag, status: 304 }]);

  await rename('Rexy');
  const changed = await fetchPet();
  await snap(page, folder, 'fetch-changed');
  expect(changed).toMatchObject({ status: 200, name: 'Rexy', remaining: String(Number(first.remaining) - 1) });
  expect(changed.etag).not.toBe(first.etag);
  expect(answered(`/pets/${petId}`)).toEqual([{ ifNoneMatch: first.etag, status: 200 }]);
});

it('revalidates Apollo Client’s GET queries through the browser’s cache, with a key', async () => {
  const queryPet = () => page.evaluate((id) => (globalThis as unknown as ShopWindow).queryPet(id), petId);
  await rename('Max');
  seen = [];
  expect(await queryPet()).toBe('Apollo Client: Max');
  await snap(page, folder, 'apollo-first');
  expect(await queryPet()).toBe('Apollo Client: Max');
  await snap(page, folder, 'apollo-revalidated');
  const [first, second] = answered('/graphql?');
  expect(first).toEqual({ status: 200 });
  expect(second).toMatchObject({ status: 304 });

  await rename('Buddy');
  expect(await queryPet()).toBe('Apollo Client: Buddy');
  await snap(page, folder, 'apollo-changed');
  expect(answered('/graphql?')).toEqual([{ ifNoneMatch: second.ifNoneMatch, status: 200 }]);
});
