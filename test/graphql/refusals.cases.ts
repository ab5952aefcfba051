import { ApolloServer, HeaderMap } from '@apollo/server';
import { buildSchema } from 'graphql';
import pino from 'pino';
import request from 'supertest';
import { MAX_NESTING, nestsDeeperThan } from '../../src/graphql/nesting-limit';
import { withoutRepeatedSelections } from '../../src/graphql/prepared-documents';
import { startGraphQLServer } from '../../src/graphql/server';
import { parse, print } from 'graphql';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';
import { captureLog, type CapturedLog } from '../helpers/log-capture';

let t: TestApp;
let log: CapturedLog;
let petId: string;
beforeAll(async () => {
  log = captureLog('warn');
  t = await startTestApp({}, { logger: log.logger });
  petId = await createPet(t, await createCategory(t, 'Dogs'), 'Rex');
});
afterAll(() => t.close());

const OVER_WEBSOCKET = {
  message: 'Subscriptions are served over WebSocket at /graphql (the graphql-ws protocol) or over Server-Sent Events at /graphql/stream, not over HTTP',
  extensions: { code: 'BAD_REQUEST', status: 400 },
};

/** GET /graphql as a browser would send a query, with the header that passes CSRF prevention. */
const getQuery = (params: Record<string, string>) =>
  request(t.url).get('/graphql').query(params).set('Apollo-Require-Preflight', 'true');

describe('a subscription over HTTP', () => {
  it('is refused with 400 BAD_REQUEST over POST, naming the WebSocket endpoint, and logs nothing', async () => {
    const result = await gql(t.url, 'subscription { petChanged { id } }');
    expect(result.status).toBe(400);
    expect(result.errors).toEqual([OVER_WEBSOCKET]);
    expect(log.lines).toEqual([]);
  });

  it('is refused the same way over GET, without the Allow header of a wrong method', async () => {
    const response = await getQuery({ query: 'subscription OnChange { petChanged { id } }' });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([OVER_WEBSOCKET]);
    expect(response.headers.allow).toBeUndefined();
    expect(log.lines).toEqual([]);
  });

  it('is refused when named among other operations, which still run', async () => {
    const document = 'query Now { __typename } subscription Later { petChanged { id } }';
    const refused = await gql(t.url, document, undefined, { headers: {} });
    expect(refused.status).toBe(400); // no operation name: Apollo asks for one
    const later = await request(t.url).post('/graphql').send({ query: document, operationName: 'Later' });
    expect(later.status).toBe(400);
    expect(later.body.errors).toEqual([OVER_WEBSOCKET]);
    const now = await request(t.url).post('/graphql').send({ query: document, operationName: 'Now' });
    expect(now.status).toBe(200);
    expect([now.body.data, now.body.errors]).toEqual([{ __typename: 'Query' }, undefined]);
  });

  it('is refused the same way by a schema that has subscriptions', async () => {
    const schema = buildSchema(`
      type Query { hello: String }
      type Subscription { ticked: Int }
    `);
    const server = await startGraphQLServer(schema, { introspection: true, maxQueryCost: 1000, responseCache: true, responseCacheMaxAgeSeconds: 60 }, pino({ level: 'silent' }), () => 0);
    try {
      for (const method of ['POST', 'GET'] as const) {
        const response = await send(server, method, 'subscription { ticked }');
        expect([method, response.status, JSON.parse(response.body).errors]).toEqual([method, 400, [OVER_WEBSOCKET]]);
      }
      const query = await send(server, 'GET', '{ __typename }');
      expect(query.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

/** One request straight to Apollo, as the Express integration hands it over. */
async function send<TContext extends object>(server: ApolloServer<TContext>, method: 'GET' | 'POST', query: string) {
  const headers = new HeaderMap([
    ['content-type', 'application/json'],
    ['apollo-require-preflight', 'true'],
  ]);
  const response = await server.executeHTTPGraphQLRequest({
    httpGraphQLRequest: method === 'GET'
      ? { method, headers, search: new URLSearchParams({ query }).toString(), body: undefined }
      : { method, headers, search: '', body: { query } },
    context: async () => ({}) as TContext, // no resolver of that schema reads it
  });
  if (response.body.kind !== 'complete') throw new Error('expected a complete body');
  return { status: response.status ?? 200, body: response.body.string };
}

describe('documents within the limits are executed; over a limit, the code names the limit', () => {
  const typenames = (count: number) => `{ ${Array(count).fill('__typename').join(' ')} }`;

  it('serves 900 __typename selections (depth 1; one response key, so cost 0)', async () => {
    const result = await gql(t.url, typenames(900));
    expect(result.status).toBe(200);
    expect([result.data, result.errors]).toEqual([{ __typename: 'Query' }, undefined]);
  });

  it('serves a field selected 900 times, half of them in inline fragments (cost 902)', async () => {
    const repeats = Array(450).fill('... on Pet { name } name').join(' ');
    const result = await gql(t.url, `query($id: ID!) { pet(id: $id) { ${repeats} ...Named } } fragment Named on Pet { name }`, { id: petId });
    expect(result.status).toBe(200);
    expect([result.data, result.errors]).toEqual([{ pet: { name: 'Rex' } }, undefined]);
  });

  it('refuses 5,000 aliased __typename selections with 400 QUERY_TOO_COMPLEX for their cost', async () => {
    const aliased = `{ ${Array.from({ length: 5000 }, (_, i) => `t${i}: __typename`).join(' ')} }`;
    const result = await gql(t.url, aliased);
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['QUERY_TOO_COMPLEX']);
    // Each repeat under another alias pays: 4,999 of them.
    expect(result.errors?.[0].message).toMatch(/cost 4999 exceeds the limit of 1000/);
  });

  it('never answers a bare "Validation aborted.": a document too repetitive to validate is QUERY_TOO_COMPLEX', async () => {
    // 1,000 selections of one field that differ only in their directive's variable.
    const variables = Array.from({ length: 1000 }, (_, i) => `$v${i}: Boolean = false`).join(' ');
    const fields = Array.from({ length: 1000 }, (_, i) => `__typename @include(if: $v${i})`).join(' ');
    const result = await gql(t.url, `query(${variables}) { ${fields} }`);
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(result.errors?.[0].message).not.toMatch(/aborted/);
  });

  it('runs a document that quotes the "too repetitive" message once: its path is chosen before Apollo runs', async () => {
    const sentence = 'The document repeats selections of one field too often to validate; select each field once';
    const runs = jest.spyOn(ApolloServer.prototype, 'executeHTTPGraphQLRequest');
    try {
      // Apollo's refusal of the variable quotes it, in a 400 like the refusal it mimics.
      const result = await gql(t.url, 'query($first: Int) { pets(first: $first) { totalCount } }', { first: sentence });
      expect(result.status).toBe(400);
      expect(JSON.stringify(result.errors)).toContain(sentence);
      expect(runs).toHaveBeenCalledTimes(1);
    } finally {
      runs.mockRestore();
    }
  });

  it("holds a document taken down the prepared path to Apollo's bound on recursive selections", async () => {
    // Each fragment spreads the one before it twice (an exact repeat): 2^25 selections once expanded.
    const fragments = Array.from({ length: 24 }, (_, i) => `fragment F${i + 1} on Query { ...F${i} ...F${i} }`).join(' ');
    const result = await gql(t.url, `query Doubling { ...F24 } fragment F0 on Query { __typename } ${fragments}`);
    expect(result.status).toBe(400);
    expect(result.errors).toEqual([
      { message: 'Operation "Doubling" recursively requests too many selections.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED', status: 400 } },
    ]);
  });

  it('answers a mistake repeated exactly as graphql-js does: an error for each repeat, each with its location', async () => {
    const result = await gql(t.url, '{ pets(first: 1) { nope nope totalCount } }');
    expect(result.status).toBe(400);
    const located = result.errors?.map((error: any) => [error.message.replace(/ Did you mean.*/, ''), error.locations, error.extensions.code]);
    const unknown = 'Cannot query field "nope" on type "PetConnection".';
    expect(located).toEqual([
      [unknown, [{ line: 1, column: 20 }], 'GRAPHQL_VALIDATION_FAILED'],
      [unknown, [{ line: 1, column: 25 }], 'GRAPHQL_VALIDATION_FAILED'],
    ]);
  });

  it('still reports a document with over 100 errors as GRAPHQL_VALIDATION_FAILED', async () => {
    const result = await gql(t.url, `{ ${Array.from({ length: 150 }, (_, i) => `nope${i}`).join(' ')} }`);
    expect(result.status).toBe(400);
    expect(new Set(codes(result))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
  });

  it('refuses a 30,000-deep selection with 400 QUERY_TOO_COMPLEX, before parsing can overflow', async () => {
    const deep = `{${'a{'.repeat(30_000)}a${'}'.repeat(30_001)}`;
    expect(Buffer.byteLength(JSON.stringify({ query: deep }))).toBeLessThan(102_400);
    const result = await gql(t.url, deep);
    expect(result.status).toBe(400);
    expect(result.errors).toEqual([
      { message: `The document nests selections or values more than ${MAX_NESTING} deep`, extensions: { code: 'QUERY_TOO_COMPLEX', status: 400 } },
    ]);
  });

  it('refuses deep nesting of real fields, of list values and over GET the same way', async () => {
    const path = 'pets { nodes { category { '.repeat(1500);
    const fields = await gql(t.url, `{ ${path} id ${'} } } '.repeat(1500)}}`);
    expect([fields.status, codes(fields)]).toEqual([400, ['QUERY_TOO_COMPLEX']]);
    const list = await gql(t.url, `{ pet(id: ${'['.repeat(20_000)}1${']'.repeat(20_000)}) { id } }`);
    expect([list.status, codes(list)]).toEqual([400, ['QUERY_TOO_COMPLEX']]);
    const viaGet = await getQuery({ query: `{${'a{'.repeat(1000)}a${'}'.repeat(1001)}` });
    expect([viaGet.status, viaGet.body.errors[0].extensions.code]).toEqual([400, 'QUERY_TOO_COMPLEX']);
  });

  it('applies the body limit first: a deep document over 100 KiB is 413 PAYLOAD_TOO_LARGE', async () => {
    const result = await gql(t.url, `{${'a{'.repeat(40_000)}a${'}'.repeat(40_001)}`);
    expect(result.status).toBe(413);
    expect(codes(result)).toEqual(['PAYLOAD_TOO_LARGE']);
  });

  it('does not count braces inside strings or comments', async () => {
    const result = await gql(t.url, `# ${'{'.repeat(5000)}\n{ pet(id: "${petId}") { name } }`);
    expect(result.status).toBe(200);
    expect(result.data).toEqual({ pet: { name: 'Rex' } });
  });
});

describe('nestsDeeperThan', () => {
  it('counts braces and brackets, not strings, block strings or comments', () => {
    expect(nestsDeeperThan('{ a { b } }', 2)).toBe(false);
    expect(nestsDeeperThan('{ a { b { c } } }', 2)).toBe(true);
    expect(nestsDeeperThan('query($x: [[ID]]) { a(x: [[1]]) }', 2)).toBe(true);
    expect(nestsDeeperThan('{ a(x: {y: {z: 1}}) }', 2)).toBe(true);
    expect(nestsDeeperThan('{ a(s: "{{{{", t: """[[[[""") } # {{{{', 2)).toBe(false);
    expect(nestsDeeperThan('{ a "unterminated { b { c', 2)).toBe(false); // left to the parser
  });
});

describe('withoutRepeatedSelections', () => {
  it('drops exact repeats at every level and keeps the document object when there are none', () => {
    const document = parse('{ a a b: a a @skip(if: true) x { y y } ...F ...F ... on T { z } ... on T { z } } fragment F on T { w w }');
    expect(print(withoutRepeatedSelections(document))).toBe(
      print(parse('{ a b: a a @skip(if: true) x { y } ...F ... on T { z } } fragment F on T { w }')),
    );
    const plain = parse('{ a b c { d } }');
    expect(withoutRepeatedSelections(plain)).toBe(plain);
  });
});

describe('client mistakes in values', () => {
  it('refuses a null for a Boolean! directive argument 400 BAD_USER_INPUT with graphql-js’s message, logging nothing', async () => {
    const logged = log.lines.length;
    const query = `query($a: Boolean = true) { pet(id: "${petId}") { id name @include(if: $a) } }`;
    const result = await gql(t.url, query, { a: null });
    expect(result.status).toBe(400);
    expect(result.body).toEqual({
      errors: [{ message: 'Argument "if" of non-null type "Boolean!" must not be null.', locations: [{ line: 1, column: query.indexOf('$a)') + 1 }], extensions: { code: 'BAD_USER_INPUT', status: 400 } }],
    });
    expect(log.lines.slice(logged)).toEqual([]);
  });

  it.each([
    [null, 'first must be a number from 1 to 100, got null'],
    [0, 'first must be at least 1'],
    [101, 'first must be at most 100'],
  ])('refuses first: %p with one message', async (first, message) => {
    const result = await gql(t.url, 'query($first: Int) { pets(first: $first) { totalCount } }', { first });
    expect(result.errors?.map((error) => [error.message, error.extensions.code])).toEqual([[message, 'BAD_USER_INPUT']]);
  });

  it('refuses a cursor that does not decode whatever is selected, a count alone included', async () => {
    for (const selection of ['totalCount', 'nodes { id }', 'pageInfo { hasNextPage }']) {
      const result = await gql(t.url, `query($after: String) { pets(after: $after) { ${selection} } }`, { after: 'not a cursor' });
      expect(result.errors?.map((error) => [error.message, error.extensions.code])).toEqual([['Expected after to be a cursor from a previous page, got "not a cursor"', 'BAD_USER_INPUT']]);
    }
  });

  it('refuses variables of the wrong type as graphql-js does: every error, each with its location', async () => {
    const result = await gql(t.url, 'query($first: Int, $id: ID!) { pets(first: $first) { totalCount } pet(id: $id) { id } }', { first: 'x', id: null });
    expect(result.status).toBe(400);
    expect(result.errors).toEqual([
      { message: 'Variable "$first" got invalid value "x"; Int cannot represent non-integer value: "x"', locations: [{ line: 1, column: 7 }], extensions: { code: 'BAD_USER_INPUT', status: 400 } },
      { message: 'Variable "$id" of non-null type "ID!" must not be null.', locations: [{ line: 1, column: 20 }], extensions: { code: 'BAD_USER_INPUT', status: 400 } },
    ]);
  });
});
