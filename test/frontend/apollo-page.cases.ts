import { print } from 'graphql';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { sharedChromium, screenshotFolder, snap } from './browser';
import { corpusOperation } from './corpus';
import { type Shop, type ShopFront, shopScript, startShop } from './shop-server';

/**
 * The Apollo Client set-up of docs/front-end-clients.md in a real page of a shop on another origin: Apollo Client 4
 * bundled with the page's script as a shop's build bundles it (shopScript), the shop front's
 * PetList query, a key in X-API-Key (so a CORS preflight), and the pets listed on the page.
 */

let t: TestApp;
let browser: Browser;
let page: Page;
let shop: Shop;
let front: ShopFront = { html: '', script: '' };
const folder = screenshotFolder('apollo-client-page');

/** That guide's client, as the shop's own module: typePolicies and all. */
async function shopFront(gateway: string, key: string): Promise<ShopFront> {
  const source = `
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';

const pagedNodes = (keyArgs) => ({
  keyArgs,
  merge: (existing, incoming, { args }) =>
    existing && args?.after ? { ...incoming, nodes: [...existing.nodes, ...incoming.nodes] } : incoming,
});
const client = new ApolloClient({
  link: new HttpLink({ uri: ${JSON.stringify(`${gateway}/graphql`)}, headers: { 'X-API-Key': ${JSON.stringify(key)} } }),
  cache: new InMemoryCache({
    typePolicies: {
      InventoryItem: { keyFields: ['petId'] },
      Query: { fields: { pets: pagedNodes(['filter']), orders: pagedNodes(['filter']) } },
    },
  }),
});
const { data } = await client.query({ query: gql(${JSON.stringify(print(corpusOperation('PetList')))}), variables: { first: 20, withStock: true } });
document.querySelector('#pets').replaceChildren(...data.pets.nodes.map((pet) => {
  const item = document.createElement('li');
  item.textContent = pet.name + ' · ' + pet.category.name + ' · ' + pet.inventory.quantity + ' in stock';
  return item;
}));
document.querySelector('#total').textContent = data.pets.totalCount + ' pets';
`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pet shop</title><link rel="icon" href="data:,">
</head><body style="font-family: sans-serif">
<h1>Our pets</h1><p id="total">Loading…</p><ul id="pets"></ul>
<script type="module" src="/shop.js"></script>
</body></html>`;
  return { html, script: await shopScript(source) };
}

beforeAll(async () => {
  browser = await sharedChromium();
  shop = await startShop(() => front);
  t = await startTestApp({ CORS_ORIGINS: shop.origin });
  const dogs = await createCategory(t, 'Dogs');
  const cats = await createCategory(t, 'Cats');
  for (const [name, category] of [['Rex', dogs], ['Milo', cats], ['Bella', dogs]]) await createPet(t, category, name);
  const { key } = await createApiKey(t, { plan: 'FREE' });
  page = await browser.newPage({ viewport: { width: 800, height: 500 } });
  front = await shopFront(t.url, key);
});
afterAll(async () => {
  await page?.close();
  await t?.close();
  await shop?.close();
});

it('lists the pets through Apollo Client, from the shop’s own origin with a key', async () => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  await page.goto(`${shop.origin}/`);
  await page.getByText('3 pets').waitFor();
  await snap(page, folder, 'pet-list');
  expect(await page.locator('#pets li').allInnerTexts()).toEqual(['Rex · Dogs · 0 in stock', 'Milo · Cats · 0 in stock', 'Bella · Dogs · 0 in stock']);
  expect(errors).toEqual([]);
});
