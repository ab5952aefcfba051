import { auditServer } from 'graphql-http';
import { startTestApp, type TestApp } from '../helpers/app';
import { printFigure } from '../helpers/figures';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

it("passes graphql-http's GraphQL-over-HTTP server audits with no MUST failure", async () => {
  // As a front end with a key: the audit sends more requests than an anonymous client may.
  const fetchFn = (input: string | URL | Request, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('X-API-Key', t.adminKey);
    return fetch(input, { ...init, headers });
  };
  const results = await auditServer({ url: `${t.url}/graphql`, fetchFn });
  const tally = { ok: 0, notice: 0, warn: 0, error: 0 };
  for (const result of results) tally[result.status] += 1;
  const notes = results.filter((result) => result.status !== 'ok').map((result) => `${result.status} ${result.name}: ${'reason' in result ? result.reason : ''}`);
  printFigure(`graphql-http audits: ${tally.ok} passed, ${tally.notice} notices, ${tally.warn} warnings, ${tally.error} failures\n${notes.join('\n')}`);
  expect(results.filter((result) => result.status === 'error').map((result) => result.name)).toEqual([]);
});
