import pino from 'pino';
import request from 'supertest';
import { serializeError, withSafeErrors } from '../../src/logger';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, PLACE_ORDER, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { captureLog, type CapturedLog } from '../helpers/log-capture';

// Text PostgreSQL cannot store is refused before execution, on both surfaces, never a 500.
let t: TestApp;
let log: CapturedLog;
beforeAll(async () => {
  log = captureLog('debug');
  t = await startTestApp({ LOG_LEVEL: 'debug' }, { logger: log.logger });
});
afterAll(() => t.close());

const REFUSAL = 'expected text without NUL characters (\\u0000) or unpaired surrogates';

describe('GraphQL', () => {
  it('refuses a NUL byte in a variable with 400 BAD_USER_INPUT naming the argument', async () => {
    const result = await gql(t.url, 'query($n: String) { pets(filter: { nameContains: $n }) { totalCount } }', { n: 'a\u0000b' });
    expect(result.status).toBe(400);
    expect(result.data).toBeUndefined();
    expect(result.errors).toEqual([
      { message: `argument filter.nameContains (variable $n): ${REFUSAL}`, extensions: { code: 'BAD_USER_INPUT', status: 400 } },
    ]);
  });

  it('refuses a NUL byte in a string literal, naming the input field', async () => {
    const result = await gql(t.url, 'mutation { createCategory(input: { name: "a\\u0000b" }) { id } }', undefined, { key: t.adminKey });
    expect(result.status).toBe(400);
    expect(result.errors?.[0]).toMatchObject({ message: `argument input.name: ${REFUSAL}`, extensions: { code: 'BAD_USER_INPUT' } });
    const categories = await t.db.dataSource.query("SELECT count(*)::int AS n FROM categories WHERE name LIKE 'a%b'");
    expect(categories[0].n).toBe(0);
  });

  it('refuses a NUL idempotency key before placing anything, and never logs the key', async () => {
    const petId = await stockedPet(t, 5);
    const { key } = await createApiKey(t, { plan: 'PRO' });
    const idempotencyKey = `retry-7f3a9c\u0000secret-part`;
    const result = await gql(t.url, PLACE_ORDER, { input: { petId, quantity: 1 }, key: idempotencyKey }, { key });
    expect(result.status).toBe(400);
    expect(result.errors?.[0]).toMatchObject({ message: `argument idempotencyKey (variable $key): ${REFUSAL}`, extensions: { code: 'BAD_USER_INPUT' } });
    const stock = await gql(t.url, `{ inventoryItem(petId: "${petId}") { quantity } }`);
    expect(stock.data?.inventoryItem.quantity).toBe(5);
    const written = JSON.stringify(log.lines);
    expect(written).not.toContain('retry-7f3a9c');
    expect(written).not.toContain('secret-part');
  });

  it('refuses an unpaired surrogate deep in an input, and stores a paired one', async () => {
    const refused = await gql(t.url, 'mutation($input: NewCategory!) { createCategory(input: $input) { id } }', { input: { name: 'x\ud800' } }, { key: t.adminKey });
    expect(refused.status).toBe(400);
    expect(refused.errors?.[0].message).toBe(`argument input (variable $input.name): ${REFUSAL}`);
    const stored = await gql(t.url, 'mutation($input: NewCategory!) { createCategory(input: $input) { name } }', { input: { name: 'Fish 🐟' } }, { key: t.adminKey });
    expect(stored.data?.createCategory).toEqual({ name: 'Fish 🐟' });
  });

  it('refuses a NUL in a GET request variable too', async () => {
    const response = await request(t.url)
      .get('/graphql')
      .query({ query: 'query($n: String) { pets(filter: { nameContains: $n }) { totalCount } }', variables: JSON.stringify({ n: '\u0000' }) })
      .set('Apollo-Require-Preflight', 'true');
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', status: 400 });
  });
});

describe('REST', () => {
  it.each([
    ['/store/orders?petId=1%00', 'petId'],
    ['/store/orders?complete=true%00', 'complete'],
    ['/store/orders?limit=1%00', 'limit'],
  ])('refuses %s with 400 BAD_USER_INPUT naming the parameter', async (path, name) => {
    const response = await request(t.url).get(path).set('X-API-Key', t.adminKey);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'BAD_USER_INPUT', status: 400 });
    expect(response.body.message).toMatch(new RegExp(`^${name}: `));
  });

  it('refuses a NUL in the path id with 400 BAD_USER_INPUT', async () => {
    const response = await request(t.url).get('/pets/1%00');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'BAD_USER_INPUT', status: 400 });
  });
});

describe('logged errors', () => {
  it('never carry the bound parameters or the detail of a failed statement', async () => {
    const failure = await t.db.dataSource
      .query("SELECT $1::text AS k, 1 / 0 AS boom, (SELECT $2::int) AS n", ['idem-4b1d-value', 7])
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(JSON.stringify(failure)).toContain('idem-4b1d-value'); // the raw error does carry it
    const lines: string[] = [];
    const logger = withSafeErrors(pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }));
    logger.error({ err: failure }, 'statement failed');
    expect(lines.join()).not.toContain('idem-4b1d-value');
    expect(JSON.parse(lines[0]).err).toMatchObject({ message: 'division by zero', code: '22012' });
    expect(serializeError(failure)).not.toHaveProperty('parameters');
  });
});
