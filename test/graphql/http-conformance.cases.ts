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

it('answers a POST in the JSON type its Accept header prefers, as Apollo Server chooses it', async () => {
  const typeFor = async (accept?: string) => {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.adminKey, ...(accept === undefined ? {} : { accept }) },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    return `${response.status} ${response.headers.get('content-type')}`;
  };
  // Twice each: the second answer comes from the choice kept for that header.
  for (let round = 0; round < 2; round += 1) {
    expect(await typeFor()).toBe('200 application/json; charset=utf-8');
    expect(await typeFor('*/*')).toBe('200 application/json; charset=utf-8');
    expect(await typeFor('application/json')).toBe('200 application/json; charset=utf-8');
    expect(await typeFor('application/graphql-response+json')).toBe('200 application/graphql-response+json; charset=utf-8');
    expect(await typeFor('application/graphql-response+json, application/json')).toBe('200 application/graphql-response+json; charset=utf-8');
    expect(await typeFor('application/json;q=0.9, application/graphql-response+json')).toBe('200 application/graphql-response+json; charset=utf-8');
    expect(await typeFor('application/graphql-response+json;q=0.5, application/*')).toBe('200 application/json; charset=utf-8');
    expect(await typeFor('text/html')).toBe('406 application/json; charset=utf-8');
  }
});

it('sends a GraphQL answer whole, with its Content-Length in bytes', async () => {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': t.adminKey },
    body: JSON.stringify({ query: 'query { __type(name: "Pet") { description } }' }),
  });
  const body = Buffer.from(await response.arrayBuffer());
  expect([response.status, response.headers.get('transfer-encoding'), Number(response.headers.get('content-length'))]).toEqual([200, null, body.length]);
});
