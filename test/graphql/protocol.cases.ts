import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

let t: TestApp;
let petId: string;
beforeAll(async () => {
  t = await startTestApp();
  petId = await createPet(t, await createCategory(t));
});
afterAll(() => t.close());

const errorOf = (body: any) => body.errors?.[0]?.extensions;

describe('depth and cost limits', () => {
  /** pet → category → pets → nodes → category → …, ending in a scalar: `depth` fields deep. */
  function nested(depth: number): string {
    const path = ['category', 'pets(first: 1)', 'nodes'];
    const fields = Array.from({ length: depth - 2 }, (_, i) => path[i % 3]);
    const leaf = fields.at(-1)?.startsWith('pets') ? 'totalCount' : 'id';
    const selection = fields.reduceRight((inner, field) => `${field} { ${inner} }`, leaf);
    return `{ pet(id: "${petId}") { ${selection} } }`;
  }

  it('accepts depth 10 and refuses depth 11 with 400 QUERY_TOO_COMPLEX', async () => {
    const ok = await gql(t.url, nested(10));
    expect(ok.errors).toBeUndefined();
    const deep = await gql(t.url, nested(11));
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual({ errors: [{ message: 'Query depth 11 exceeds the limit of 10', extensions: { code: 'QUERY_TOO_COMPLEX', status: 400 } }] });
  });

  it('counts fragments and inline fragments toward depth', async () => {
    const query = `query { pet(id: "${petId}") { ...A } }
      fragment A on Pet { category { ...B } }
      fragment B on Category { pets(first: 1) { nodes { ... on Pet { category { pets(first: 1) { nodes { category { pets(first: 1) { nodes { id } } } } } } } } } }`;
    const result = await gql(t.url, query);
    expect(result.status).toBe(400);
    expect(errorOf(result.body).code).toBe('QUERY_TOO_COMPLEX');
  });

  it('multiplies a connection’s selection by first when costing', async () => {
    // 2 (the connection) + 100 × (1 pet + 1 category + 1 inventory) = 302
    const fits = await gql(t.url, '{ pets(first: 100) { nodes { id category { name } inventory { quantity } } } }');
    expect(fits.errors).toBeUndefined();
    const tooMuch = await gql(t.url, '{ categories(first: 100) { nodes { pets(first: 100) { nodes { id } } } } }');
    expect(tooMuch.status).toBe(400);
    // 2 + 100 × (1 category + 2 + 100 × 1 pet) + 1 batched lookup for every category's pets = 10,303
    expect(tooMuch.errors?.[0].message).toBe('Query cost 10303 exceeds the limit of 1000');
  });

  it('refuses an alias repeated 1,000 times', async () => {
    const aliases = Array.from({ length: 1000 }, (_, i) => `a${i}: pet(id: "${petId}") { id }`).join(' ');
    const result = await gql(t.url, `{ ${aliases} }`);
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['QUERY_TOO_COMPLEX']);
  });

  it('lets introspection through, however deep its type references go', async () => {
    const result = await gql(
      t.url,
      '{ __schema { types { name fields { name type { kind ofType { kind ofType { kind ofType { kind ofType { kind ofType { kind ofType { name } } } } } } } } } } }',
    );
    expect(result.errors).toBeUndefined();
  });

  it('refuses a variable of the wrong type with 400 BAD_USER_INPUT', async () => {
    const result = await gql(t.url, 'query($first: Int) { pets(first: $first) { totalCount } }', { first: 'ten' });
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('HTTP protocol', () => {
  const post = () => request(t.url).post('/graphql');

  it('accepts a body of exactly 102,400 bytes and refuses one byte more with 413 PAYLOAD_TOO_LARGE', async () => {
    const body = (size: number) => {
      const base = JSON.stringify({ query: '{ pets(first: 1) { totalCount } }', variables: { pad: '' } });
      return base.replace('"pad":""', `"pad":"${'x'.repeat(size - base.length)}"`);
    };
    const fits = await post().set('Content-Type', 'application/json').send(body(102_400));
    expect(fits.status).toBe(200);
    const tooLarge = await post().set('Content-Type', 'application/json').send(body(102_401));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual({ errors: [{ message: 'The request body exceeds 102400 bytes', extensions: { code: 'PAYLOAD_TOO_LARGE', status: 413 } }] });
  });

  it('refuses malformed JSON with 400 BAD_REQUEST', async () => {
    const result = await post().set('Content-Type', 'application/json').send('{"query": ');
    expect(result.status).toBe(400);
    expect(errorOf(result.body)).toEqual({ code: 'BAD_REQUEST', status: 400 });
  });

  it('refuses batched operations with 400 BAD_REQUEST', async () => {
    const result = await post().set('Content-Type', 'application/json').send([{ query: '{ pets { totalCount } }' }, { query: '{ pets { totalCount } }' }]);
    expect(result.status).toBe(400);
    expect(errorOf(result.body)).toEqual({ code: 'BAD_REQUEST', status: 400 });
  });

  it('refuses a POST that is not JSON with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const result = await post().set('Content-Type', 'text/plain').send('{ pets { totalCount } }');
    expect(result.status).toBe(415);
    expect(errorOf(result.body)).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 });
  });

  it('refuses a client that accepts no JSON with 406 NOT_ACCEPTABLE, before running anything', async () => {
    const result = await post().set('Content-Type', 'application/json').set('Accept', 'text/csv').send({ query: 'mutation { createCategory(input: {name: "Never"}) { id } }' });
    expect(result.status).toBe(406);
    expect(errorOf(result.body)).toEqual({ code: 'NOT_ACCEPTABLE', status: 406 });
    const categories = await gql(t.url, '{ categories(first: 100) { nodes { name } } }');
    expect(categories.data?.categories.nodes).not.toContainEqual({ name: 'Never' });
  });

  it('takes text/json for no JSON type: 406 over /graphql and REST', async () => {
    const graphql = await post().set('Content-Type', 'application/json').set('Accept', 'text/json').send({ query: '{ __typename }' });
    expect([graphql.status, errorOf(graphql.body)]).toEqual([406, { code: 'NOT_ACCEPTABLE', status: 406 }]);
    const rest = await request(t.url).get(`/pets/${petId}`).set('Accept', 'text/json');
    expect([rest.status, rest.body.code]).toEqual([406, 'NOT_ACCEPTABLE']);
    const ranked = await post().set('Content-Type', 'application/json').set('Accept', 'text/json, application/*;q=0.5').send({ query: '{ __typename }' });
    expect(ranked.status).toBe(200);
  });

  it('refuses a Content-Type that names its charset twice, or does not parse, as malformed: 400 BAD_REQUEST', async () => {
    for (const type of ['application/json; charset=utf-8; charset=utf-16', 'application/json; charset=utf-8; CHARSET="utf-8"', 'application/json; charset', 'application/json; charset=']) {
      const result = await post().set('Content-Type', type).send(JSON.stringify({ query: '{ __typename }' }));
      expect([type, result.status, result.body.errors?.[0]]).toEqual([type, 400, expect.objectContaining({ extensions: { code: 'BAD_REQUEST', status: 400 } })]);
    }
    for (const type of ['application/json;', 'application/json ; charset="UTF-8"', 'Application/JSON;charset=utf-8']) {
      const result = await post().set('Content-Type', type).send(JSON.stringify({ query: '{ __typename }' }));
      expect([type, result.status]).toEqual([type, 200]);
    }
  });

  it('refuses other methods with 405 METHOD_NOT_ALLOWED and an Allow header', async () => {
    const result = await request(t.url).put('/graphql').send({});
    expect(result.status).toBe(405);
    expect(result.headers.allow).toBe('GET, POST');
    expect(errorOf(result.body)).toEqual({ code: 'METHOD_NOT_ALLOWED', status: 405 });
  });

  it('serves queries over GET but refuses mutations over GET with 405', async () => {
    const query = await request(t.url).get('/graphql').query({ query: '{ pets { totalCount } }' }).set('Apollo-Require-Preflight', 'true');
    expect(query.status).toBe(200);
    expect(query.body.data.pets.totalCount).toBe(1);
    const mutation = await request(t.url)
      .get('/graphql')
      .query({ query: 'mutation { createCategory(input: {name: "X"}) { id } }' })
      .set('X-API-Key', t.adminKey);
    expect(mutation.status).toBe(405);
    expect(errorOf(mutation.body)).toEqual({ code: 'METHOD_NOT_ALLOWED', status: 405 });
  });

  it('answers parse and validation failures with 400 and their codes', async () => {
    const parse = await gql(t.url, '{ pets { ');
    expect(parse.status).toBe(400);
    expect(codes(parse)).toEqual(['GRAPHQL_PARSE_FAILED']);
    const validation = await gql(t.url, '{ pets { nope } }');
    expect(validation.status).toBe(400);
    expect(codes(validation)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(errorOf(validation.body).status).toBe(400);
  });

  it('refuses an empty body and a body without a query with 400 BAD_REQUEST', async () => {
    const empty = await post().set('Content-Type', 'application/json').send('');
    expect(empty.status).toBe(400);
    expect(errorOf(empty.body).code).toBe('BAD_REQUEST');
    const noQuery = await post().set('Content-Type', 'application/json').send({ variables: {} });
    expect(noQuery.status).toBe(400);
    expect(errorOf(noQuery.body).code).toBe('BAD_REQUEST');
  });

  it('answers an unknown path with the Error object', async () => {
    const result = await request(t.url).get('/nowhere');
    expect(result.status).toBe(404);
    expect(result.body).toEqual({ code: 'NOT_FOUND', message: 'No resource at GET /nowhere', status: 404 });
  });
});

describe('internal errors', () => {
  it('are masked: no stack, SQL or driver text reaches the client', async () => {
    await t.db.dataSource.query('ALTER TABLE categories RENAME COLUMN description TO description_moved');
    try {
      const result = await gql(t.url, '{ categories { nodes { name } } }');
      expect(result.status).toBe(200);
      expect(result.errors).toEqual([
        { message: 'Internal server error', locations: [{ line: 1, column: 3 }], path: ['categories'], extensions: { code: 'INTERNAL_SERVER_ERROR', status: 500 } },
      ]);
      expect(JSON.stringify(result.body)).not.toMatch(/description_moved|does not exist|SELECT|QueryFailed|\.ts:/i);
    } finally {
      await t.db.dataSource.query('ALTER TABLE categories RENAME COLUMN description_moved TO description');
    }
  });
});
