import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Plan, planQuota } from '../../src/auth/plans';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, setStock } from '../helpers/builders';
import { printFigure } from '../helpers/figures';
import { gql } from '../helpers/gql';

/**
 * Conditional requests (docs/contract.md §10) through HTTP, as a polling client or a browser's
 * cache sends them: a strong ETag on REST and GraphQL GET answers, If-None-Match that matches
 * answered 304 with no body and the rate-limit headers of a request that counted nothing.
 */
const PET_QUERY = 'query PetName($id: ID!) { pet(id: $id) { id name } }';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const DOCUMENT_ID = `sha256:${sha256(PET_QUERY)}`;
/** Apollo refuses a GET with no header a browser form could not send (CSRF prevention): a front end sends one. */
const PREFLIGHTED = { 'Apollo-Require-Preflight': 'true' };

let t: TestApp;
let manifestDir: string;
let petId: string;

beforeAll(async () => {
  manifestDir = mkdtempSync(join(tmpdir(), 'conditional-'));
  const manifest = join(manifestDir, 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ [DOCUMENT_ID]: PET_QUERY }));
  t = await startTestApp({ TRUSTED_DOCUMENTS: manifest });
  petId = await createPet(t, await createCategory(t, 'Dogs'), 'Rex');
});
afterAll(async () => {
  await t.close();
  rmSync(manifestDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  etag: string | null;
  cacheControl: string | null;
  vary: string[];
  remaining: number;
  rateLimit: string | null;
  bytes: number;
  body: string;
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${t.url}${path}`, { headers });
  const body = await response.text();
  return {
    status: response.status,
    etag: response.headers.get('etag'),
    cacheControl: response.headers.get('cache-control'),
    vary: (response.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase()),
    remaining: Number(response.headers.get('x-ratelimit-remaining')),
    rateLimit: response.headers.get('ratelimit'),
    bytes: Buffer.byteLength(body),
    body,
  };
}

const keyed = (key: string, headers: Record<string, string> = {}) => ({ 'X-API-Key': key, ...headers });
const graphqlGet = (params: Record<string, unknown>) =>
  `/graphql?${new URLSearchParams(Object.fromEntries(Object.entries(params).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)])))}`;

/**
 * The first request, then the same with its ETag in If-None-Match, then once more without: the
 * repeat is 304 with the first's remaining quota (it counted nothing), and the third counts again.
 */
async function revalidate(path: string, headers: Record<string, string>) {
  const first = await get(path, headers);
  const repeated = await get(path, { ...headers, 'If-None-Match': first.etag ?? '' });
  const plain = await get(path, headers);
  return { first, repeated, plain };
}

function expectRevalidated({ first, repeated, plain }: Awaited<ReturnType<typeof revalidate>>, cacheControl: string) {
  expect(first).toMatchObject({ status: 200, cacheControl });
  expect(first.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  expect(first.vary).toContain('x-api-key');
  expect(repeated).toMatchObject({ status: 304, etag: first.etag, cacheControl, bytes: 0, remaining: first.remaining, rateLimit: first.rateLimit });
  expect(plain).toMatchObject({ status: 200, etag: first.etag, remaining: first.remaining - 1 });
}

describe('REST', () => {
  it('tags GET /pets/{petId}, answers its ETag 304 counting nothing, and a changed pet 200 with a new ETag', async () => {
    const { key } = await createApiKey(t);
    const path = `/pets/${petId}`;
    const round = await revalidate(path, keyed(key));
    expectRevalidated(round, 'private, no-cache');
    expect(JSON.parse(round.first.body)).toMatchObject({ name: 'Rex' });
    expect(round.repeated.body).toBe('');

    const renamed = await gql(t.url, 'mutation($id: ID!) { updatePet(id: $id, input: { name: "Rexy" }) { name } }', { id: petId }, { key: t.adminKey });
    expect(renamed.data?.updatePet).toEqual({ name: 'Rexy' });
    const changed = await get(path, keyed(key, { 'If-None-Match': round.first.etag ?? '' }));
    expect(changed.status).toBe(200);
    expect(changed.etag).not.toBe(round.first.etag);
    expect(JSON.parse(changed.body)).toMatchObject({ name: 'Rexy' });
  });

  it('lets anyone keep the anonymous pet, revalidating (no-cache), and names X-API-Key in Vary beside CORS’s Origin', async () => {
    const first = await get(`/pets/${petId}`);
    expect(first).toMatchObject({ status: 200, cacheControl: 'no-cache' });
    expect(first.vary).toEqual(expect.arrayContaining(['origin', 'x-api-key']));
    const head = await fetch(`${t.url}/pets/${petId}`, { method: 'HEAD', headers: { 'If-None-Match': first.etag ?? '' } });
    expect(head.status).toBe(304);
  });

  it('tags GET /store/orders with its total: a new order changes both', async () => {
    const { key } = await createApiKey(t);
    await setStock(t, petId, 5);
    await placeOrder(t, key, petId);
    const round = await revalidate('/store/orders', keyed(key));
    expectRevalidated(round, 'private, no-cache');
    expect(JSON.parse(round.first.body)).toHaveLength(1);

    await placeOrder(t, key, petId);
    const changed = await get('/store/orders?limit=1', keyed(key));
    const samePage = await get('/store/orders?limit=1', keyed(key, { 'If-None-Match': changed.etag ?? '' }));
    expect(samePage.status).toBe(304);
    await placeOrder(t, key, petId);
    // The first page holds the same order; the total beside it changed, and so does the tag.
    const grown = await get('/store/orders?limit=1', keyed(key, { 'If-None-Match': changed.etag ?? '' }));
    expect(grown.status).toBe(200);
    expect(grown.etag).not.toBe(changed.etag);
  });

  it('never answers an error 304, and never tags one', async () => {
    const missing = await get('/pets/999999', { 'If-None-Match': '*' });
    expect(missing).toMatchObject({ status: 404, etag: null });
    const anonymousOrders = await get('/store/orders', { 'If-None-Match': '*' });
    expect(anonymousOrders).toMatchObject({ status: 401, etag: null });
  });
});

describe('GraphQL over GET', () => {
  it('tags a query sent by its text, answers its ETag 304 counting nothing, and a changed pet 200', async () => {
    const { key } = await createApiKey(t);
    const path = graphqlGet({ query: PET_QUERY, variables: { id: petId } });
    const round = await revalidate(path, keyed(key));
    expectRevalidated(round, 'private, no-cache');
    expect(round.first.vary).toContain('accept');

    await gql(t.url, 'mutation($id: ID!) { updatePet(id: $id, input: { name: "Max" }) { name } }', { id: petId }, { key: t.adminKey });
    const changed = await get(path, keyed(key, { 'If-None-Match': round.first.etag ?? '' }));
    expect(changed.status).toBe(200);
    expect(JSON.parse(changed.body).data.pet.name).toBe('Max');
  });

  it('tags a query sent by its Apollo persisted-query hash', async () => {
    const { key } = await createApiKey(t);
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(PET_QUERY) } };
    const registered = await get(graphqlGet({ query: PET_QUERY, variables: { id: petId }, extensions }), keyed(key));
    expect(registered.status).toBe(200);
    expectRevalidated(await revalidate(graphqlGet({ variables: { id: petId }, extensions }), keyed(key)), 'private, no-cache');
  });

  it('tags a query named by its documentId, and lets shared caches keep the anonymous catalogue for its max-age while browsers revalidate', async () => {
    const round = await revalidate(graphqlGet({ documentId: DOCUMENT_ID, variables: { id: petId } }), PREFLIGHTED);
    expectRevalidated(round, 'public, max-age=0, s-maxage=60');
  });

  it('keeps an anonymous rateLimit to the caller’s own cache: it is its address’s', async () => {
    const answer = await get(graphqlGet({ query: '{ rateLimit { remaining } }' }), PREFLIGHTED);
    expect(answer).toMatchObject({ status: 200, cacheControl: 'private, no-cache' });
  });

  it('matches If-None-Match by the weak comparison, in a list, and *', async () => {
    const { key } = await createApiKey(t);
    const path = graphqlGet({ query: PET_QUERY, variables: { id: petId } });
    const { etag } = await get(path, keyed(key));
    for (const header of [`W/${etag}`, `"other", ${etag}`, '*']) expect((await get(path, keyed(key, { 'If-None-Match': header }))).status).toBe(304);
    expect((await get(path, keyed(key, { 'If-None-Match': '"other"' }))).status).toBe(200);
  });

  it('gives each response type its own ETag', async () => {
    const { key } = await createApiKey(t);
    const path = graphqlGet({ query: PET_QUERY, variables: { id: petId } });
    const json = await get(path, keyed(key, { Accept: 'application/json' }));
    const graphqlResponse = await get(path, keyed(key, { Accept: 'application/graphql-response+json' }));
    expect(json.body).toBe(graphqlResponse.body);
    expect(json.etag).not.toBe(graphqlResponse.etag);
    expect((await get(path, keyed(key, { Accept: 'application/json', 'If-None-Match': graphqlResponse.etag ?? '' }))).status).toBe(200);
  });

  it('never tags an answer with errors, a mutation refused over GET, or a POST', async () => {
    const { key } = await createApiKey(t);
    const failing = await get(graphqlGet({ query: '{ pet(id: "1") { id } order(id: "1") { id } apiKeys(first: 1) { nodes { id } } }' }), PREFLIGHTED);
    expect(failing.etag).toBeNull();
    const withErrors = await get(graphqlGet({ query: '{ nope }' }), keyed(key, { 'If-None-Match': '*' }));
    expect(withErrors).toMatchObject({ status: 400, etag: null });
    const mutation = await get(graphqlGet({ query: 'mutation { createCategory(input: { name: "X" }) { id } }' }), keyed(key, { 'If-None-Match': '*' }));
    expect(mutation.status).toBe(405);
    expect(mutation.etag).toBeNull();
    const posted = await gql(t.url, PET_QUERY, { id: petId }, { key, headers: { 'If-None-Match': '*' } });
    expect(posted.status).toBe(200);
    expect(posted.headers.etag).toBeUndefined();
  });
});

it('prints the conditional-request figures: status, bytes and quota used, first and repeated', async () => {
  const { key, id } = await createApiKey(t);
  await setStock(t, petId, 1);
  await placeOrder(t, key, petId);
  const quotaLeft = async () => (await t.app.services.limiter.peek(`key:${id}`, planQuota(Plan.FREE))).windows[0].remaining;
  const cases: [string, string][] = [
    ['REST GET /pets/{petId}', `/pets/${petId}`],
    ['REST GET /store/orders', '/store/orders'],
    ['GraphQL GET, query text', graphqlGet({ query: PET_QUERY, variables: { id: petId } })],
    ['GraphQL GET, documentId', graphqlGet({ documentId: DOCUMENT_ID, variables: { id: petId } })],
  ];
  const rows = ['| request | first: status, body bytes, quota used | repeated with If-None-Match: status, body bytes, quota used |', '|---|---|---|'];
  for (const [name, path] of cases) {
    const before = await quotaLeft();
    const first = await get(path, keyed(key));
    const between = await quotaLeft();
    const repeated = await get(path, keyed(key, { 'If-None-Match': first.etag ?? '' }));
    const after = await quotaLeft();
    expect([first.status, repeated.status, before - between, between - after]).toEqual([200, 304, 1, 0]);
    expect(repeated.remaining).toBe(after);
    rows.push(`| ${name} | ${first.status}, ${first.bytes} B, ${before - between} | ${repeated.status}, ${repeated.bytes} B, ${between - after} |`);
  }
  printFigure(`conditional requests (one FREE key, its minute window):\n${rows.join('\n')}`);
});

describe('what a 304 gives back (docs/contract.md §10)', () => {
  /** `count` GETs of `path` by `key`, one after the other, with `ifNoneMatch` when given. */
  async function sendRepeatedly(path: string, key: string, count: number, ifNoneMatch?: string) {
    const answers: Answer[] = [];
    for (let n = 0; n < count; n += 1) answers.push(await get(path, keyed(key, ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch })));
    return answers;
  }
  const statuses = (answers: Answer[]) => [...new Set(answers.map((answer) => answer.status))];
  const table: string[] = ['| requests (one FREE key, 60 a minute) | statuses | X-RateLimit-Remaining |', '|---|---|---|'];
  const row = (name: string, answers: Answer[]) => {
    const remaining = answers.map((answer) => answer.remaining);
    const byStatus = new Map<number, number>();
    for (const { status } of answers) byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    table.push(`| ${name} | ${[...byStatus].map(([status, count]) => `${status} × ${count}`).join(', ')} | ${remaining[0]} → ${remaining.at(-1)} |`);
  };
  afterAll(() => printFigure(`304 refunds:\n${table.join('\n')}`));

  it.each([
    ['REST', () => `/pets/${petId}`],
    ['GraphQL GET', () => graphqlGet({ query: PET_QUERY, variables: { id: petId } })],
  ])('%s: If-None-Match: * is never refunded: 3 plain GETs, then 70 with * use up the quota and get 429', async (name, path) => {
    const { key } = await createApiKey(t);
    const plain = await sendRepeatedly(path(), key, 3);
    expect(plain.map((answer) => answer.remaining)).toEqual([59, 58, 57]);
    const starred = await sendRepeatedly(path(), key, 70, '*');
    // Each counted like a 200: 57 are answered 304, down to 0 left, and the rest refused.
    expect(starred.slice(0, 57).map((answer) => [answer.status, answer.remaining])).toEqual(Array.from({ length: 57 }, (_, n) => [304, 56 - n]));
    expect(starred[57].status).toBe(429);
    expect(statuses(starred.slice(57)).every((status) => status === 429 || status === 403)).toBe(true);
    row(`${name}: 3 plain`, plain);
    row(`${name}: then 70 with If-None-Match: *`, starred);
  });

  it('refunds a 304 for a tag in a list, and past the bound (its per-minute quota a minute) counts it like a 200', async () => {
    const { key } = await createApiKey(t);
    const path = `/pets/${petId}`;
    const [first] = await sendRepeatedly(path, key, 1);
    expect(first.remaining).toBe(59);
    const listed = await sendRepeatedly(path, key, 60, `"other", ${first.etag}`);
    // Sixty given back: the quota stands where the plain GET left it.
    expect(listed.map((answer) => [answer.status, answer.remaining])).toEqual(Array.from({ length: 60 }, () => [304, 59]));
    const past = await sendRepeatedly(path, key, 5, first.etag ?? '');
    expect(past.map((answer) => [answer.status, answer.remaining])).toEqual([58, 57, 56, 55, 54].map((remaining) => [304, remaining]));
    row('1 plain', [first]);
    row('then 60 with a tag list holding its ETag', listed);
    row('then 5 more with its ETag (past the bound)', past);
  });
});
