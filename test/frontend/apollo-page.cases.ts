import { readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative, resolve, sep } from 'node:path';
import { print } from 'graphql';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { launchChromium, screenshotFolder, snap } from './browser';
import { corpusOperation } from './corpus';
import { importMap } from './import-map';

/**
 * The Apollo Client set-up of docs/front-end-clients.md in a real page of a shop on another origin: Apollo Client 4's
 * ES modules as installed (an import map in place of a bundler), the shop front's PetList query,
 * a key in X-API-Key (so a CORS preflight), and the pets listed on the page.
 */
const ROOT = resolve(__dirname, '..', '..');
const PACKAGES = ['@apollo/client', 'graphql', 'graphql-tag', 'rxjs', '@wry/equality', '@wry/trie', '@wry/caches', '@wry/context', 'optimism', 'tslib'];

let t: TestApp;
let browser: Browser;
let page: Page;
let shop: { origin: string; server: Server };
let html = '';
const folder = screenshotFolder('apollo-client-page');

/** That guide's client, as the shop's own module: typePolicies and all. */
function shopPage(gateway: string, key: string, origin: string): string {
  const script = `
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
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pet shop</title><link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify(importMap(PACKAGES, ROOT, `${origin}/`))}</script>
</head><body style="font-family: sans-serif">
<h1>Our pets</h1><p id="total">Loading…</p><ul id="pets"></ul>
<script type="module">${script}</script>
</body></html>`;
}

/** The file a bundler would take for an import written without its extension (rxjs's ES modules are). */
async function moduleFile(file: string): Promise<string | undefined> {
  for (const candidate of [file, `${file}.js`, join(file, 'index.js')]) {
    if ((await stat(candidate).catch(() => undefined))?.isFile()) return candidate;
  }
  return undefined;
}

/**
 * The shop's own origin, a static server on loopback: its page, and the packages' files from
 * node_modules as a development server serves them (an import without an extension redirected
 * to its file, so that the file's relative imports resolve from where it is).
 */
async function startShop(page: () => string): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    void (async () => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://shop').pathname);
      if (path === '/') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(page());
      const requested = resolve(ROOT, `.${path}`);
      const file = requested.startsWith(join(ROOT, 'node_modules') + sep) ? await moduleFile(requested) : undefined;
      if (file === undefined) return res.writeHead(404).end();
      if (file !== requested) return res.writeHead(302, { Location: `/${relative(ROOT, file).split(sep).join('/')}` }).end();
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(await readFile(file));
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  browser = await launchChromium();
  shop = await startShop(() => html);
  t = await startTestApp({ CORS_ORIGINS: shop.origin });
  const dogs = await createCategory(t, 'Dogs');
  const cats = await createCategory(t, 'Cats');
  for (const [name, category] of [['Rex', dogs], ['Milo', cats], ['Bella', dogs]]) await createPet(t, category, name);
  const { key } = await createApiKey(t, { plan: 'FREE' });
  page = await browser.newPage({ viewport: { width: 800, height: 500 } });
  html = shopPage(t.url, key, shop.origin);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await new Promise((closed) => shop?.server.close(closed));
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
