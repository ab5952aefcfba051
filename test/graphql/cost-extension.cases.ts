import request from 'supertest';
import { generateApiKey } from '../../src/auth/key-secret';
import { startTestApp, type TestApp } from '../helpers/app';
import { codes, gql, type GraphQLResult } from '../helpers/gql';

/**
 * Which responses carry `extensions.cost`, as the "Query limits" of docs/api.md and docs/contract.md §5
 * say: every operation that was costed (parsed, validated, within the depth limit), and nothing
 * refused before that.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ BAN_THRESHOLD: '100' });
});
afterAll(() => t.close());

const post = async (body: object): Promise<GraphQLResult> => {
  const response = await request(t.url).post('/graphql').set('Content-Type', 'application/json').send(body);
  return { status: response.status, headers: response.headers as Record<string, string>, errors: response.body?.errors, body: response.body };
};
const costOf = (result: GraphQLResult) => result.body?.extensions?.cost;
/** A pet, then `levels` × its category's pets: 1 + 3 × levels fields deep, and a name. */
const deeper = (levels: number) => `{ pet(id: "1") { ${'category { pets(first: 1) { nodes { '.repeat(levels)}name${' } } }'.repeat(levels)} } }`;

describe('extensions.cost', () => {
  it('comes with an executed operation, and with one whose fields failed', async () => {
    expect(costOf(await gql(t.url, '{ pets(first: 1) { totalCount } }'))).toEqual({ requested: expect.any(Number), actual: expect.any(Number), limit: 1000 });
    const fieldError = await gql(t.url, '{ apiKeys(first: 1) { totalCount } }');
    expect(codes(fieldError)).toEqual(['UNAUTHENTICATED']);
    expect(costOf(fieldError)).toMatchObject({ limit: 1000 });
  });

  it('comes with a refusal for cost, with nothing actually spent', async () => {
    const result = await gql(t.url, `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: pets(first: 100) { nodes { id } }`).join(' ')} }`);
    expect(codes(result)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(costOf(result)).toMatchObject({ actual: 0, limit: 1000 });
  });

  it('comes with the refusals made after costing: a subscription over HTTP, text PostgreSQL cannot store', async () => {
    const subscription = await gql(t.url, 'subscription { petChanged { id } }');
    expect(codes(subscription)).toEqual(['BAD_REQUEST']);
    expect(costOf(subscription)).toMatchObject({ actual: 0, limit: 1000 });
    const nul = await gql(t.url, '{ pets(first: 1, filter: { nameContains: "a\\u0000" }) { totalCount } }');
    expect(codes(nul)).toEqual(['BAD_USER_INPUT']);
    expect(costOf(nul)).toMatchObject({ actual: 0, limit: 1000 });
  });

  it.each([
    ['a parse failure', '{ pets(first: 1) {', 'GRAPHQL_PARSE_FAILED'],
    ['a validation failure', '{ pets(first: 1) { noSuchField } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['a depth refusal', deeper(4), 'QUERY_TOO_COMPLEX'],
    ['an unknown persisted-query hash', undefined, 'PERSISTED_QUERY_NOT_FOUND'],
  ])('is absent from %s', async (_name, query, code) => {
    const unknownHash = { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } };
    const result = query === undefined ? await post({ extensions: unknownHash }) : await gql(t.url, query);
    expect(result.status).toBe(400);
    expect(codes(result)).toEqual([code]);
    expect(costOf(result)).toBeUndefined();
  });

  it('is absent from refusals made before GraphQL runs: an invalid key, a 429', async () => {
    const invalidKey = await gql(t.url, '{ pets(first: 1) { totalCount } }', undefined, { key: generateApiKey() });
    expect(codes(invalidKey)).toEqual(['INVALID_API_KEY']);
    expect(costOf(invalidKey)).toBeUndefined();
    let limited: GraphQLResult | undefined;
    const address = { 'X-Forwarded-For': '203.0.113.9' }; // ignored without TRUST_PROXY: one anonymous identity either way
    for (let sent = 0; sent < 100 && !limited; sent++) {
      const result = await gql(t.url, '{ __typename }', undefined, { headers: address });
      if (result.status === 429) limited = result;
    }
    expect(limited && codes(limited)).toEqual(['RATE_LIMITED']);
    expect(limited && costOf(limited)).toBeUndefined();
  });
});
