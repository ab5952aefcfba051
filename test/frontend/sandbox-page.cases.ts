import type { Browser, Page, Route } from 'playwright-core';
import { EXAMPLE_OPERATION } from '../../src/graphql/explorer/example-operation';
import { SANDBOX_SCRIPT, SANDBOX_WAIT_MS } from '../../src/graphql/explorer/sandbox-page';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { sharedChromium, screenshotFolder, snap } from './browser';

/**
 * The page a browser gets at /graphql by default, in Chromium, which never reaches the internet:
 * Sandbox's script is answered by the test (a stub that draws what it was given, as if online),
 * or fails (offline), or never comes (a firewall that drops it); every other request beyond the
 * gateway is aborted and recorded, and fails the test.
 */
let t: TestApp;
let browser: Browser;
const folder = screenshotFolder('sandbox-page');

/** Apollo's EmbeddedSandbox, as far as the page uses it: it keeps its options and draws them in its target. */
const STUB_SANDBOX = `
window.EmbeddedSandbox = function (options) {
  window.stubSandboxOptions = options;
  var embed = document.createElement('pre');
  embed.className = 'stub-sandbox';
  embed.style.cssText = 'margin: 1em; padding: 1em; border: 2px dashed #3f20ba; font: 14px monospace;';
  embed.textContent = 'Stub Sandbox, endpoint ' + options.initialEndpoint + '\\n\\n' + options.initialState.document;
  document.querySelector(options.target).appendChild(embed);
};
`;

beforeAll(async () => {
  // The browser first: without it the test fails at once, leaving no gateway behind.
  browser = await sharedChromium();
  t = await startTestApp();
  await createPet(t, await createCategory(t, 'Dogs'), 'Rex');
});
afterAll(() => t?.close());

/** A page of its own: the gateway's answers pass, Sandbox's script goes to `sandbox`, anything else is refused and kept in `outside`. */
async function openPage(sandbox: (route: Route) => Promise<void>): Promise<{ page: Page; outside: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const outside: string[] = [];
  await page.addInitScript({ content: NOTE_DECISION });
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${t.url}/`)) return route.continue();
    if (url === SANDBOX_SCRIPT) return sandbox(route);
    outside.push(url);
    return route.abort('internetdisconnected');
  });
  return { page, outside };
}

/**
 * Notes, by the page's own clock (ms since it was opened), when it says which explorer it chose
 * (`data-explorer` on its body), so that the time counted is the page's, not the test's polling.
 */
const NOTE_DECISION = `
new MutationObserver(function (changes, observer) {
  if (!document.body || !document.body.hasAttribute('data-explorer')) return;
  window.decidedAt = performance.now();
  observer.disconnect();
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-explorer'] });
`;

/** When the page chose `explorer`, in ms since it was opened. */
async function decided(page: Page, explorer: 'sandbox' | 'graphiql'): Promise<number> {
  await page.locator(`body[data-explorer="${explorer}"]`).waitFor({ state: 'attached' });
  return page.evaluate<number>('window.decidedAt');
}

it("embeds Apollo Sandbox when its script loads, on the gateway's endpoint with the first query", async () => {
  const { page, outside } = await openPage((route) => route.fulfill({ contentType: 'text/javascript', body: STUB_SANDBOX }));
  try {
    await page.goto(`${t.url}/graphql`);
    await decided(page, 'sandbox');
    await page.locator('#sandbox .stub-sandbox').waitFor();
    await snap(page, folder, '1-sandbox-online');
    const options = await page.evaluate('window.stubSandboxOptions');
    expect(options).toEqual({ target: '#sandbox', initialEndpoint: `${t.url}/graphql`, initialState: { document: EXAMPLE_OPERATION, headers: {} }, endpointIsEditable: false });
    expect(await page.locator('#fallback').isHidden()).toBe(true);
    expect(outside).toEqual([]);
  } finally {
    await page.close();
  }
});

it('shows GraphiQL in its place at once when Sandbox cannot load, with the reason, and runs the first query', async () => {
  const { page, outside } = await openPage((route) => route.abort('internetdisconnected'));
  try {
    await page.goto(`${t.url}/graphql`);
    expect(await decided(page, 'graphiql')).toBeLessThan(3_000);
    expect(await page.locator('#why').innerText()).toBe('Apollo Sandbox could not be loaded from embeddable-sandbox.cdn.apollographql.com');
    const graphiql = page.frameLocator('#graphiql');
    await graphiql.locator('.graphiql-query-editor', { hasText: 'FirstPets' }).waitFor();
    await graphiql.locator('.graphiql-execute-button').click();
    await graphiql.locator('.result-window').getByText('"Rex"').waitFor();
    await snap(page, folder, '2-sandbox-offline-graphiql');
    expect(await graphiql.locator('.result-window').innerText()).toMatch(/"totalCount": 1/);
    expect(outside).toEqual([]);
  } finally {
    await page.close();
  }
});

it(`shows GraphiQL when Sandbox's script has not come after ${SANDBOX_WAIT_MS / 1000} s`, async () => {
  // A firewall that drops the request: no answer, no error.
  const { page, outside } = await openPage(() => new Promise(() => undefined));
  try {
    // The page's own clock, run on by the test: its timers fire at the times they were set for,
    // without the test waiting those seconds out.
    await page.clock.install();
    await page.goto(`${t.url}/graphql`, { waitUntil: 'domcontentloaded' });
    await page.clock.pauseAt(await page.evaluate<number>('Date.now() + 100'));
    expect(await page.evaluate('document.body.getAttribute("data-explorer")')).toBeNull();
    await page.clock.runFor(SANDBOX_WAIT_MS);
    await page.clock.resume();
    const after = await decided(page, 'graphiql');
    expect([after >= SANDBOX_WAIT_MS, after < 3_000]).toEqual([true, true]);
    expect(await page.locator('#why').innerText()).toBe(`Apollo Sandbox did not load within ${SANDBOX_WAIT_MS / 1000} s`);
    await page.frameLocator('#graphiql').locator('.graphiql-query-editor', { hasText: 'FirstPets' }).waitFor();
    expect(outside).toEqual([]);
  } finally {
    await page.close();
  }
});
