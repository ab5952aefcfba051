import request from 'supertest';
import { EXAMPLE_OPERATION } from '../../src/graphql/explorer/example-operation';
import { SANDBOX_SCRIPT } from '../../src/graphql/explorer/sandbox-page';
import { startTestApp, type TestApp } from '../helpers/app';
import { fencedBlocks } from '../helpers/docs';
import { codes, gql } from '../helpers/gql';

const STUDIO = 'https://studio.apollographql.com';
/** What Chromium sends when a page is opened. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

/** The files a page loads: every src and href. */
const loadedBy = (html: string) => [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);

describe('outside production', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ CORS_ORIGINS: 'https://shop.example.com' });
  });
  afterAll(() => t.close());

  it('serves a browser Apollo Sandbox from Apollo\'s CDN, with the first query and GraphiQL in its place when it cannot load', async () => {
    const response = await request(t.url).get('/graphql').set('Accept', BROWSER_ACCEPT);
    expect([response.status, response.headers['content-type'], response.headers.vary, response.headers['x-ratelimit-limit']]).toEqual([200, 'text/html; charset=utf-8', 'Accept', undefined]);
    expect(response.text).toContain(JSON.stringify(SANDBOX_SCRIPT));
    expect(SANDBOX_SCRIPT).toMatch(/^https:\/\/embeddable-sandbox\.cdn\.apollographql\.com\/v\d+\//);
    expect(response.text).toContain(JSON.stringify(EXAMPLE_OPERATION));
    expect(response.text).toContain('"graphiql":"/graphql/explorer"');
    // A client asking for JSON, even one that takes anything, gets GraphQL's answer and not the page.
    for (const accept of ['*/*', 'application/json, text/html', 'text/html;q=0.5, application/json']) {
      const answer = await request(t.url).get('/graphql').query({ query: '{ __typename }' }).set('Accept', accept).set('X-API-Key', t.adminKey);
      expect([accept, answer.status, answer.body.data]).toEqual([accept, 200, { __typename: 'Query' }]);
    }
  });

  it('serves GraphiQL instead with GRAPHQL_EXPLORER=graphiql, every file of it from the gateway itself, outside CORS and the limiter', async () => {
    const graphiql = await startTestApp({ GRAPHQL_EXPLORER: 'graphiql', ADMIN_API_KEY: t.adminKey }, { db: t.db });
    try {
      const response = await request(graphiql.url).get('/graphql').set('Accept', BROWSER_ACCEPT);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.text).toMatch(/GraphiQL/);
      expect(response.text).not.toMatch(/https?:/);
      expect((await request(graphiql.url).get('/graphql/explorer')).text).toBe(response.text);
      const files = loadedBy(response.text);
      expect(files.length).toBe(5);
      for (const file of files) {
        const asset = await request(graphiql.url).get(file).buffer(true);
        expect([file, asset.status, asset.headers['cache-control'], asset.headers['x-ratelimit-limit']]).toEqual([file, 200, 'public, max-age=86400', undefined]);
        expect(asset.headers['content-type']).toMatch(file.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
        expect(Number(asset.headers['content-length'])).toBeGreaterThan(1000);
      }
    } finally {
      await graphiql.close();
    }
  });

  it('answers what the explorer does not serve with the Error object', async () => {
    const missing = await request(t.url).get('/graphql/explorer/secret.js');
    expect([missing.status, missing.body]).toEqual([404, { code: 'NOT_FOUND', message: 'No resource at GET /graphql/explorer/secret.js', status: 404 }]);
    expect((await request(t.url).get('/graphql/explorer/..%2F..%2Fpackage.json')).status).toBe(404);
    const posted = await request(t.url).post('/graphql/explorer').send({});
    expect([posted.status, posted.headers.allow, posted.body.code]).toEqual([405, 'GET, HEAD', 'METHOD_NOT_ALLOWED']);
  });

  it('opens with the README’s first query', async () => {
    expect(fencedBlocks('graphql', ['README.md'])[0]?.text).toBe(EXAMPLE_OPERATION);
    const page = await request(t.url).get('/graphql/explorer');
    expect(page.text).toContain(JSON.stringify(EXAMPLE_OPERATION));
  });

  it('answers introspection', async () => {
    const result = await gql(t.url, '{ __schema { queryType { name } } }');
    expect(result.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });

  it('lets Apollo Studio send X-API-Key cross-origin and read the quota headers', async () => {
    const preflight = await request(t.url)
      .options('/graphql')
      .set('Origin', STUDIO)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type,x-api-key');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(STUDIO);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/X-API-Key/i);
    const actual = await request(t.url).post('/graphql').set('Origin', STUDIO).send({ query: '{ pets { totalCount } }' });
    expect(actual.headers['access-control-allow-origin']).toBe(STUDIO);
    const exposed = actual.headers['access-control-expose-headers'].split(',');
    expect(exposed).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Read-After']));
  });

  it('allows the origins of CORS_ORIGINS and no others', async () => {
    const listed = await request(t.url).post('/graphql').set('Origin', 'https://shop.example.com').send({ query: '{ pets { totalCount } }' });
    expect(listed.headers['access-control-allow-origin']).toBe('https://shop.example.com');
    const other = await request(t.url).post('/graphql').set('Origin', 'https://evil.example').send({ query: '{ pets { totalCount } }' });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('exposes headers to an allowed origin only, and varies on Origin for every caller', async () => {
    const answers = {
      listed: await request(t.url).post('/graphql').set('Origin', 'https://shop.example.com').send({ query: '{ __typename }' }),
      other: await request(t.url).post('/graphql').set('Origin', 'https://evil.example').send({ query: '{ __typename }' }),
      none: await request(t.url).post('/graphql').send({ query: '{ __typename }' }),
    };
    const seen = Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, [answer.headers.vary, answer.headers['access-control-expose-headers'] !== undefined]]));
    expect(seen).toEqual({ listed: ['Origin', true], other: ['Origin', false], none: ['Origin', false] });
  });

  it('blocks a GET that a cross-site form could send, and serves one that carries a key or a preflight header', async () => {
    const query = { query: '{ pets { totalCount } }' };
    const simple = await request(t.url).get('/graphql').query(query);
    expect(simple.status).toBe(400);
    expect(simple.body.errors[0].extensions).toEqual({ code: 'BAD_REQUEST', status: 400 });
    expect((await request(t.url).get('/graphql').query(query).set('X-API-Key', t.adminKey)).status).toBe(200);
    expect((await request(t.url).get('/graphql').query(query).set('Apollo-Require-Preflight', 'true')).status).toBe(200);
  });

  it('runs every GraphQL example of the README and the guides as written', async () => {
    const examples = fencedBlocks('graphql');
    expect(examples.length).toBeGreaterThanOrEqual(4);
    for (const { file, text } of examples) {
      const result = await gql(t.url, text, undefined, { key: t.adminKey });
      expect({ file, text, errors: result.errors }).toEqual({ file, text, errors: undefined });
    }
  });
});

describe('in production', () => {
  let t: TestApp;
  afterEach(() => t.close());

  it('turns introspection and the landing page off', async () => {
    t = await startTestApp({ NODE_ENV: 'production' });
    const introspection = await gql(t.url, '{ __schema { queryType { name } } }');
    expect(introspection.status).toBe(400);
    expect(codes(introspection)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    // The refusal names the setting an operator of this gateway has, not Apollo's constructor option.
    expect(introspection.errors?.[0].message).toMatch(/GRAPHQL_INTROSPECTION/);
    expect(introspection.errors?.[0].message).not.toMatch(/ApolloServer/);
    const query = await gql(t.url, '{ pets { totalCount } }');
    expect(query.status).toBe(200);
  });

  it('tells a browser at /graphql that the explorer is off and how to query, and serves none of its files', async () => {
    t = await startTestApp({ NODE_ENV: 'production' });
    const page = await request(t.url).get('/graphql').set('Accept', BROWSER_ACCEPT);
    expect([page.status, page.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.text).toMatch(/The explorer is off/);
    expect(page.text).toMatch(/POST \/graphql/);
    expect(page.text).not.toMatch(/EmbeddedSandbox|<script/);
    const explorer = await request(t.url).get('/graphql/explorer');
    expect([explorer.status, explorer.text]).toEqual([404, page.text]);
    expect((await request(t.url).get('/graphql/explorer/graphiql.min.js')).status).toBe(404);
  });

  it('refuses __type as it refuses __schema', async () => {
    t = await startTestApp({ NODE_ENV: 'production' });
    const introspection = await gql(t.url, '{ __type(name: "Pet") { name } }');
    expect(introspection.status).toBe(400);
    expect(introspection.errors?.[0].message).toMatch(/GRAPHQL_INTROSPECTION/);
  });

  it('turns introspection back on with GRAPHQL_INTROSPECTION=true', async () => {
    t = await startTestApp({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' });
    const introspection = await gql(t.url, '{ __schema { queryType { name } } }');
    expect(introspection.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

describe('GRAPHQL_INTROSPECTION=false outside production', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ GRAPHQL_INTROSPECTION: 'false' });
  });
  afterAll(() => t.close());

  it('refuses introspection, naming the setting', async () => {
    const introspection = await gql(t.url, '{ __schema { queryType { name } } }');
    expect(introspection.status).toBe(400);
    expect(codes(introspection)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(introspection.errors?.[0].message).toMatch(/GRAPHQL_INTROSPECTION/);
  });

  it('serves no explorer, which could not read the schema', async () => {
    const page = await request(t.url).get('/graphql').set('Accept', BROWSER_ACCEPT);
    expect(page.text).toMatch(/The explorer is off/);
    expect((await gql(t.url, '{ pets { totalCount } }')).status).toBe(200);
  });
});
