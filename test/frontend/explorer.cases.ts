import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { subscribed } from '../helpers/live';
import { sharedChromium, screenshotFolder, snap } from './browser';

/**
 * The offline explorer as a developer uses it, in Chromium, at /graphql with GRAPHQL_EXPLORER=graphiql
 * (by default it shows there in Sandbox's place when Sandbox cannot load: sandbox-page.cases.ts):
 * every request the page makes goes to the gateway (anything else is aborted and fails the test),
 * the first query runs, a key in the Headers tab lets a mutation through, and a subscription shows
 * the event another request causes.
 */
let t: TestApp;
let browser: Browser;
let page: Page;
let dogs: string;
const elsewhere: string[] = [];
const folder = screenshotFolder('offline-explorer');

beforeAll(async () => {
  // The browser first: without it the test fails at once, leaving no gateway behind.
  browser = await sharedChromium();
  t = await startTestApp({ GRAPHQL_EXPLORER: 'graphiql' });
  dogs = await createCategory(t, 'Dogs');
  await createPet(t, dogs, 'Rex');
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith(`${t.url}/`)) return route.continue();
    elsewhere.push(route.request().url());
    return route.abort();
  });
});
afterAll(async () => {
  await page?.close();
  await t?.close();
});

/** CodeMirror 5 (GraphiQL 3's editor) keeps its API on its element: set the text as typing would. */
async function setEditor(selector: string, text: string): Promise<void> {
  await page.locator(`${selector} .graphiql-editor:not(.hidden) .CodeMirror`).evaluate((element, value) => {
    (element as unknown as { CodeMirror: { setValue(text: string): void } }).CodeMirror.setValue(value);
  }, text);
}

const run = () => page.locator('.graphiql-execute-button').click();
const result = () => page.locator('.result-window');

it('opens at /graphql with the first query, runs it, and loads nothing from elsewhere', async () => {
  await page.goto(`${t.url}/graphql`);
  await page.locator('.graphiql-query-editor', { hasText: 'FirstPets' }).waitFor();
  await run();
  await result().getByText('"totalCount"').waitFor();
  await snap(page, folder, '1-first-query');
  expect(await result().innerText()).toMatch(/"name": "Rex"/);
  expect(elsewhere).toEqual([]);
});

it('sends the X-API-Key of the Headers tab with a mutation', async () => {
  await setEditor('.graphiql-query-editor', 'mutation AddCategory {\n  createCategory(input: { name: "Rabbits" }) { id name }\n}\n');
  await run();
  await result().getByText('"UNAUTHENTICATED"').waitFor();
  await snap(page, folder, '2-mutation-without-key');
  await page.getByRole('button', { name: 'Headers' }).click();
  await setEditor('.graphiql-editor-tool', JSON.stringify({ 'X-API-Key': t.adminKey }, null, 2));
  await run();
  await result().getByText('"Rabbits"').waitFor();
  await snap(page, folder, '3-mutation-with-key');
  expect(await result().innerText()).toMatch(/"createCategory"/);
});

it('shows the event of a subscription over Server-Sent Events', async () => {
  await setEditor('.graphiql-query-editor', 'subscription NewPets {\n  petChanged { kind pet { name } }\n}\n');
  await run();
  await subscribed(t, 1);
  await createPet(t, dogs, 'Pip');
  await result().getByText('"Pip"').waitFor();
  await snap(page, folder, '4-subscription-event');
  expect(await result().innerText()).toMatch(/"petChanged"/);
  expect(elsewhere).toEqual([]);
});
