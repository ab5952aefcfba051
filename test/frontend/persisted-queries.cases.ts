import { createHash, randomBytes } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { parse, print } from 'graphql';
import { Redis } from 'ioredis';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { redisCluster, type RedisCluster } from '../helpers/redis-cluster';
import { redisServer, type RedisServer } from '../helpers/redis-server';
import { corpusOperation } from './corpus';
import { withOwnRedis, withRedis } from '../helpers/services';
import { waitFor } from '../helpers/wait';
import { printFigure } from '../helpers/figures';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** One request as it left the client: what a network tab would show. */
interface Exchange {
  method: string;
  /** The request's size on the wire that varies with the document: URL plus body. */
  bytes: number;
  sentQuery: boolean;
  /** The document's text, when it was sent. */
  query?: string;
  status: number;
  codes: string[];
}

/** A fetch that records every request it sends, for counting what reaches the gateway. */
function recordingFetch(exchanges: Exchange[]): typeof fetch {
  return async (input, init) => {
    const url = String(input);
    const body = typeof init?.body === 'string' ? init.body : '';
    const response = await fetch(input, init);
    const answer = (await response.clone().json()) as { errors?: { extensions?: { code?: string } }[] };
    exchanges.push({
      method: init?.method ?? 'GET',
      bytes: Buffer.byteLength(url) + Buffer.byteLength(body),
      sentQuery: new URL(url).searchParams.has('query') || body.includes('"query"'),
      query: body ? (JSON.parse(body) as { query?: string }).query : undefined,
      status: response.status,
      codes: (answer.errors ?? []).map((error) => error.extensions?.code ?? ''),
    });
    return response;
  };
}

/** A front end with Apollo's persisted-query link, hashed queries over GET, as docs/front-end-clients.md shows. */
function persistedQueryClient(url: string, exchanges: Exchange[]) {
  return new ApolloClient({
    link: new PersistedQueryLink({ sha256, useGETForHashedQueries: true }).concat(
      new HttpLink({ uri: `${url}/graphql`, fetch: recordingFetch(exchanges) }),
    ),
    cache: new InMemoryCache(),
  });
}

const PET_LIST = corpusOperation('PetList');

describe('automatic persisted queries through Apollo Client', () => {
  let t: TestApp;
  let categoryId: string;
  beforeAll(async () => {
    t = await startTestApp();
    categoryId = await createCategory(t, `Parrots ${randomBytes(3).toString('hex')}`);
    for (const name of ['Polly', 'Kiwi']) await createPet(t, categoryId, name);
  });
  afterAll(() => t.close());

  it('registers a document once, then sends only its hash over GET', async () => {
    const variables = { first: 10, filter: { categoryId } };
    const first: Exchange[] = [];
    const { data } = await persistedQueryClient(t.url, first).query<any>({ query: PET_LIST, variables });
    expect(data.pets.nodes.map((pet: any) => pet.name)).toEqual(['Polly', 'Kiwi']);
    // The hash alone is unknown, so the link sends the document with it.
    expect(first.map(({ method, sentQuery, status, codes }) => [method, sentQuery, status, codes])).toEqual([
      ['GET', false, 400, ['PERSISTED_QUERY_NOT_FOUND']],
      ['POST', true, 200, []],
    ]);

    const second: Exchange[] = [];
    const again = await persistedQueryClient(t.url, second).query<any>({ query: PET_LIST, variables });
    expect(again.data).toEqual(data);
    expect(second.map(({ method, sentQuery, status, codes }) => [method, sentQuery, status, codes])).toEqual([['GET', false, 200, []]]);
    printFigure(
      `APQ PetList: first load ${first.length} requests, ${first.reduce((sum, e) => sum + e.bytes, 0)} bytes sent; ` +
        `next loads 1 request, ${second[0].bytes} bytes sent (document ${Buffer.byteLength(print(PET_LIST))} bytes)`,
    );
  });

  it('answers a GET naming a registered hash, with variables', async () => {
    const query = 'query Categories($first: Int) { categories(first: $first) { nodes { id name } } }';
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(query) } };
    const register = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query, variables: { first: 5 }, extensions }),
    });
    expect(register.status).toBe(200);
    const search = new URLSearchParams({ variables: '{"first":5}', extensions: JSON.stringify(extensions) });
    const byHash = await fetch(`${t.url}/graphql?${search}`, { headers: { 'Apollo-Require-Preflight': 'true' } });
    expect(byHash.status).toBe(200);
    expect(((await byHash.json()) as any).data).toEqual(((await register.json()) as any).data);
  });

  it('refuses a hash that does not match the document sent with it', async () => {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: '{ categories(first: 1) { nodes { id } } }', extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ other }') } } }),
    });
    expect(response.status).toBe(400);
  });
});


withRedis('automatic persisted queries across two instances on one Redis', () => {
  let db: TestDatabase;
  let apps: TestApp[];
  let redis: Redis;
  const prefix = `apq-${randomBytes(4).toString('hex')}`;
  beforeAll(async () => {
    db = await createTestDatabase();
    const first = await startTestApp({}, { db, limiterKeyPrefix: prefix });
    const second = await startTestApp({ ADMIN_API_KEY: first.adminKey }, { db, limiterKeyPrefix: prefix });
    apps = [first, second];
    redis = new Redis(process.env.REDIS_URL as string);
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await db.close();
    redis.disconnect();
  });

  it('finds on instance B a hash registered through instance A, kept under the key prefix with an expiry', async () => {
    // An alias no other test uses: a document no instance has seen.
    const document = parse(`{ pets(first: 3) { nodes { id name } p${randomBytes(4).toString('hex')}: totalCount } }`);
    const onA: Exchange[] = [];
    // Registered through A: hash unknown, then the document.
    await persistedQueryClient(apps[0].url, onA).query({ query: document });
    expect(onA.map((e) => e.sentQuery)).toEqual([false, true]);
    // Apollo Client adds __typename to the document it sends: the key is that text's hash.
    const sent = onA[1].query as string;
    const key = `${prefix}:apq:${sha256(sent)}`;
    expect(await redis.keys(`${prefix}:apq:*`)).toEqual([key]);
    expect(await redis.get(key)).toBe(sent);
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(24 * 60 * 60);

    // B has never seen the document: the hash alone is enough.
    const onB: Exchange[] = [];
    const { data } = await persistedQueryClient(apps[1].url, onB).query<any>({ query: document });
    expect(onB.map(({ method, sentQuery, status, codes }) => [method, sentQuery, status, codes])).toEqual([['GET', false, 200, []]]);
    expect(data.pets.nodes).toBeInstanceOf(Array);
    printFigure(`APQ across instances: registered through A in ${onA.length} requests, found on B by 1 request of ${onB[0].bytes} bytes`);
  });
});


withOwnRedis('automatic persisted queries while Redis is down', () => {
  let redis: RedisServer;
  let t: TestApp;
  beforeAll(async () => {
    redis = await redisServer();
    await redis.start();
    t = await startTestApp({ REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await t.close();
    await redis.kill();
  });

  it('treats every hash as unknown, so clients send their documents and nothing fails', async () => {
    const query = '{ categories(first: 2) { totalCount } }';
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(query) } };
    const post = (body: object) => fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post({ query, extensions })).status).toBe(200);
    expect((await post({ extensions })).status).toBe(200);

    await redis.kill();
    const byHash = await post({ extensions });
    expect(byHash.status).toBe(400);
    expect(((await byHash.json()) as any).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await post({ query, extensions })).status).toBe(200);

    // Back once Redis is: registered hashes are shared again.
    await redis.start();
    await untilRedisServes(t);
    expect((await post({ query, extensions })).status).toBe(200);
    expect((await post({ extensions })).status).toBe(200);
  });
});

withOwnRedis('automatic persisted queries across two instances on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let db: TestDatabase;
  let apps: TestApp[];
  beforeAll(async () => {
    cluster = await redisCluster(3, 0);
    db = await createTestDatabase();
    const env = { REDIS_CLUSTER_NODES: cluster.seeds, REDIS_URL: '' };
    const first = await startTestApp(env, { db });
    apps = [first, await startTestApp({ ...env, ADMIN_API_KEY: first.adminKey }, { db, limiterKeyPrefix: first.config.redisKeyPrefix })];
    for (const app of apps) await untilRedisServes(app);
  }, 60_000);
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await db?.close();
    await cluster?.stop();
  });

  it('finds on instance B a hash registered through instance A', async () => {
    const document = parse(`{ categories(first: 2) { c${randomBytes(4).toString('hex')}: totalCount } }`);
    const onA: Exchange[] = [];
    await persistedQueryClient(apps[0].url, onA).query({ query: document });
    expect(onA.map((e) => e.sentQuery)).toEqual([false, true]);
    const onB: Exchange[] = [];
    await persistedQueryClient(apps[1].url, onB).query({ query: document });
    expect(onB.map(({ method, sentQuery, status }) => [method, sentQuery, status])).toEqual([['GET', false, 200]]);
  });
});

/** Resolves once the gateway's /readyz reports Redis serving again (it probes in the background). */
async function untilRedisServes(app: TestApp): Promise<void> {
  const serving = async () => ((await (await fetch(`${app.url}/readyz`)).json()) as { redis?: string }).redis === 'ok';
  await waitFor(serving, 20_000, 'the gateway to use Redis again');
}
