import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { sharedChromium, screenshotFolder, snap } from './browser';

/**
 * Apollo Sandbox (GRAPHQL_EXPLORER=sandbox) opened with no internet: every request beyond the
 * gateway fails, as on a train. Its page still says where the explorer that needs none is, and
 * the link opens it.
 */
let t: TestApp;
let browser: Browser;
let page: Page;
const offline: string[] = [];
const folder = screenshotFolder('sandbox-offline');

beforeAll(async () => {
  browser = await sharedChromium();
  t = await startTestApp({ GRAPHQL_EXPLORER: 'sandbox' });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith(`${t.url}/`)) return route.continue();
    offline.push(new URL(route.request().url()).host);
    return route.abort('internetdisconnected');
  });
});
afterAll(async () => {
  await page?.close();
  await t?.close();
});

it('links an offline Sandbox page to GraphiQL, which opens with the first query', async () => {
  await page.goto(`${t.url}/graphql`);
  const link = page.getByRole('link', { name: 'GraphiQL, served by this gateway' });
  await link.waitFor();
  await snap(page, folder, '1-sandbox-offline');
  expect(offline).toContain('embeddable-sandbox.cdn.apollographql.com');
  await link.click();
  await page.locator('.graphiql-query-editor', { hasText: 'FirstPets' }).waitFor();
  await snap(page, folder, '2-graphiql');
  expect(page.url()).toBe(`${t.url}/graphql/explorer`);
});
