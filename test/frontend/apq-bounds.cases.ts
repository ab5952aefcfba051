import { createHash, randomBytes } from 'node:crypto';
import { MAX_PERSISTED_QUERY_BYTES, NOT_STORED_HEADER } from '../../src/graphql/apq-registrations';
import { ANONYMOUS_PERSISTED_QUERIES_PER_DAY } from '../../src/auth/plans';
import { startTestApp, type TestApp } from '../helpers/app';
import { withRedis } from '../helpers/services';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const extensionsOf = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(query) } });

/** A document of its own per `n`, a few bytes long, that touches no table. */
const documentNumbered = (n: number) => `query Registered${n} { __typename }`;

/** `{ __typename }` padded with a comment to exactly `bytes` bytes. */
const documentOfBytes = (bytes: number) => {
  const head = '{ __typename }\n#';
  return head + 'x'.repeat(bytes - head.length);
};

function post(url: string, body: object, headers: Record<string, string> = {}) {
  return fetch(`${url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** Sends the document with its hash: Apollo's registration. */
const register = (url: string, query: string, headers?: Record<string, string>) => post(url, { query, extensions: extensionsOf(query) }, headers);

/** The same over GET (a URL cannot carry a document near the size bound: Node takes 16 KB of headers). */
function registerByGet(url: string, query: string) {
  const search = new URLSearchParams({ query, extensions: JSON.stringify(extensionsOf(query)) });
  return fetch(`${url}/graphql?${search.toString()}`, { headers: { 'Apollo-Require-Preflight': 'true' } });
}

/** Sends the hash alone: 200 when stored, 400 PERSISTED_QUERY_NOT_FOUND when not. */
async function byHash(url: string, query: string): Promise<{ status: number; code?: string }> {
  const response = await post(url, { extensions: extensionsOf(query) });
  const body = (await response.json()) as { errors?: { extensions: { code: string } }[] };
  return { status: response.status, code: body.errors?.[0]?.extensions.code };
}

describe('automatic persisted queries: a registration counts as a request', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('goes through admission like any request, and a known document registers nothing new', async () => {
    const query = documentNumbered(0);
    const first = await register(t.url, query);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
    expect(first.headers.get(NOT_STORED_HEADER)).toBeNull();
    const again = await register(t.url, query);
    expect(again.headers.get('x-ratelimit-remaining')).toBe('58');
    expect(again.headers.get(NOT_STORED_HEADER)).toBeNull();
    expect(await byHash(t.url, query)).toEqual({ status: 200, code: undefined });
  });
});

describe('automatic persisted queries: a document over the size bound', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it(`stores a document of ${MAX_PERSISTED_QUERY_BYTES} bytes`, async () => {
    const query = documentOfBytes(MAX_PERSISTED_QUERY_BYTES);
    const response = await register(t.url, query);
    expect(response.status).toBe(200);
    expect(response.headers.get(NOT_STORED_HEADER)).toBeNull();
    expect(await byHash(t.url, query)).toEqual({ status: 200, code: undefined });
  });

  it('runs a larger one without storing it, and says so', async () => {
    const query = documentOfBytes(MAX_PERSISTED_QUERY_BYTES + 1);
    const posted = await register(t.url, query);
    expect(posted.status).toBe(200);
    expect(posted.headers.get(NOT_STORED_HEADER)).toBe('PERSISTED_QUERY_TOO_LARGE');
    expect(((await posted.json()) as any).data).toEqual({ __typename: 'Query' });
    expect(await byHash(t.url, query)).toEqual({ status: 400, code: 'PERSISTED_QUERY_NOT_FOUND' });
  });
});

/** Registers the day's number of documents, spread over `apps`, then one more: not stored, wherever it is sent. */
async function pastTheDailyNumber(apps: TestApp[]): Promise<void> {
  const run = randomBytes(3).toString('hex');
  const numbered = (n: number) => documentNumbered(n).replace('Registered', `Registered${run}x`);
  for (let n = 0; n < ANONYMOUS_PERSISTED_QUERIES_PER_DAY; n += 1) {
    const response = await register(apps[n % apps.length].url, numbered(n));
    expect([response.status, response.headers.get(NOT_STORED_HEADER)]).toEqual([200, null]);
  }
  const last = apps[apps.length - 1].url;
  const over = numbered(ANONYMOUS_PERSISTED_QUERIES_PER_DAY);
  for (const response of [await register(last, over), await registerByGet(last, over)]) {
    expect(response.status).toBe(200);
    expect(response.headers.get(NOT_STORED_HEADER)).toBe('PERSISTED_QUERY_LIMIT');
    expect(((await response.json()) as any).data).toEqual({ __typename: 'Query' });
    expect(await byHash(last, over)).toEqual({ status: 400, code: 'PERSISTED_QUERY_NOT_FOUND' });
  }
  // What was stored stays usable, and sending it again is no new registration.
  expect(await byHash(last, numbered(0))).toEqual({ status: 200, code: undefined });
  expect((await register(last, numbered(0))).headers.get(NOT_STORED_HEADER)).toBeNull();
  // The count is the identity's: a key registers on its own plan's number.
  const withKey = await register(last, over, { 'X-API-Key': apps[0].adminKey });
  expect(withKey.headers.get(NOT_STORED_HEADER)).toBeNull();
  expect(await byHash(last, over)).toEqual({ status: 200, code: undefined });
}

describe('automatic persisted queries: the daily number of registrations', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Past a minute's request quota: the registrations are what is counted here.
    t = await startTestApp({}, { limitRequests: false });
  });
  afterAll(() => t.close());

  it(`stores ${ANONYMOUS_PERSISTED_QUERIES_PER_DAY} documents a day from an anonymous address, then runs without storing`, async () => {
    await pastTheDailyNumber([t]);
  });
});

withRedis('automatic persisted queries: the daily number across two instances sharing Redis', () => {
  let apps: TestApp[];
  beforeAll(async () => {
    const first = await startTestApp({}, { limitRequests: false });
    const prefix = first.config.redisKeyPrefix;
    apps = [first, await startTestApp({ ADMIN_API_KEY: first.adminKey }, { db: first.db, limiterKeyPrefix: prefix, limitRequests: false })];
  });
  afterAll(async () => {
    await apps[1].close();
    await apps[0].close();
  });

  it('counts registrations through either instance against one number', async () => {
    await pastTheDailyNumber(apps);
  });
});
