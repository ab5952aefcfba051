import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { connectDatabase } from '../../src/db/database';
import { generateApiKey } from '../../src/auth/key-secret';
import { adminQuery, testDatabasePrefix, withDatabase } from '../helpers/database';
import { completion, GatewayProgram, type GatewayProcess, listeningUrl } from '../helpers/gateway-process';
import { type Feed, subscribe } from '../helpers/live';
import { type Nginx, startNginx } from '../helpers/nginx-server';
import { type PartRequest, partRequest } from '../helpers/raw-http';
import { freePort } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';

/**
 * The shipped nginx configuration (deploy/nginx/petstore.conf) in front of two gateway processes
 * that share a PostgreSQL database and Redis, as docs/scaling-out.md "Behind a reverse proxy"
 * runs them. Clients reach nginx from addresses of their own on the loopback network
 * (127.0.0.0/8), so that nginx sees each as a different client.
 */

/** A ceiling for a broken run, never a measurement. */
const WITHIN_MS = 20_000;
/** The shipped file's bound on an anonymous address's requests in progress. */
const ANONYMOUS_CONNECTIONS = 32;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One request to `url` from the loopback address `from`, on a connection of its own. */
function send(url: string, path: string, { from = '127.0.0.1', method = 'GET', headers = {}, body }: { from?: string; method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const call = request(`${url}${path}`, { method, localAddress: from, agent: false, headers: { ...(payload && { 'Content-Type': 'application/json' }), ...headers } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text.startsWith('{') ? JSON.parse(text) : text }));
    });
    call.on('error', reject);
    call.end(payload);
  });
}

describe('the shipped nginx configuration in front of two instances', () => {
  let program: GatewayProgram;
  let instances: { url: string; child: GatewayProcess }[] = [];
  let proxy: Nginx;
  let database: string | undefined;
  let serverUrl: string;
  let petId: string;
  const adminKey = generateApiKey();

  const graphql = (query: string, variables?: Record<string, unknown>, options: { from?: string; key?: string } = {}) =>
    send(proxy.url, '/graphql', { method: 'POST', from: options.from, headers: options.key ? { 'X-API-Key': options.key } : {}, body: { query, variables } });

  /** Subscriptions active on both instances, as their own /metrics count them. */
  const activeSubscriptions = async () => {
    let active = 0;
    for (const { url } of instances) {
      const { body } = await send(url, '/metrics');
      for (const [, value] of String(body).matchAll(/^petstore_live_subscriptions(?:\{[^}]*\})? (\d+)$/gm)) active += Number(value);
    }
    return active;
  };

  const renamePet = (name: string) => graphql('mutation($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { id } }', { id: petId, name }, { key: adminKey });

  beforeAll(async () => {
    const databaseUrl = process.env.DATABASE_URL;
    const redisUrl = process.env.REDIS_URL;
    if (!databaseUrl || !redisUrl) {
      throw new Error('expected DATABASE_URL and REDIS_URL: two instances behind nginx share a PostgreSQL database and Redis (.ci/run sets both for npm run test:slow)');
    }
    serverUrl = databaseUrl;
    database = `${testDatabasePrefix()}nginx_${process.pid}`;
    await adminQuery(serverUrl, `CREATE DATABASE ${database}`);
    const url = withDatabase(serverUrl, database);
    // Migrated once, as the first instance of a deployment would, before both start.
    await (await connectDatabase(url, { embedded: false })).destroy();
    program = GatewayProgram.transpile();
    const env = { DATABASE_URL: url, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `nginx-test-${randomBytes(6).toString('hex')}`, ADMIN_API_KEY: adminKey, PORT: '0', TRUST_PROXY: '127.0.0.1' };
    instances = await Promise.all(
      [0, 1].map(async () => {
        const child = program.start(env);
        void completion(child); // drains its output
        return { url: await listeningUrl(child), child };
      }),
    );
    proxy = await startNginx(instances.map(({ url }) => Number(new URL(url).port)));
    const category = await graphql('mutation { createCategory(input: { name: "Dogs" }) { id } }', undefined, { key: adminKey });
    const pet = await graphql('mutation($input: NewPet!) { createPet(input: $input) { id } }', { input: { name: 'Rex', categoryId: category.body.data.createCategory.id } }, { key: adminKey });
    petId = pet.body.data.createPet.id;
  }, 180_000);

  afterAll(async () => {
    await proxy?.stop();
    for (const { child } of instances) child.kill('SIGKILL');
    program?.remove();
    if (database) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it('serves GraphQL over POST and GET, and REST', async () => {
    const posted = await graphql('{ pets(first: 5) { totalCount } }');
    expect(posted.status).toBe(200);
    expect(posted.body.data.pets.totalCount).toBe(1);
    const query = encodeURIComponent('{ pet(id: "' + petId + '") { name } }');
    const got = await send(proxy.url, `/graphql?query=${query}`, { headers: { 'Apollo-Require-Preflight': 'true' } });
    expect({ status: got.status, body: got.body }).toMatchObject({ status: 200, body: { data: { pet: { name: 'Rex' } } } });
    const rest = await send(proxy.url, `/pets/${petId}`);
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ id: Number(petId), name: 'Rex' });
  });

  it('names the client by the address nginx saw: two addresses are two clients, and a client-sent X-Forwarded-For is replaced', async () => {
    const remaining = async (from: string, forged: string) =>
      Number((await send(proxy.url, '/openapi.json', { from, headers: { 'X-Forwarded-For': forged } })).headers['x-ratelimit-remaining']);
    expect(await remaining('127.0.0.2', '203.0.113.1')).toBe(59);
    expect(await remaining('127.0.0.2', '203.0.113.2')).toBe(58);
    expect(await remaining('127.0.0.3', '203.0.113.1')).toBe(59);
  });

  it("counts an anonymous address's quota across both instances, and no other address's", async () => {
    const statuses: number[] = [];
    for (let sent = 0; sent < 61; sent += 1) statuses.push((await send(proxy.url, '/openapi.json', { from: '127.0.0.4' })).status);
    expect(statuses).toEqual([...Array(60).fill(200), 429]);
    const refused = await send(proxy.url, '/openapi.json', { from: '127.0.0.4' });
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-ratelimit-limit']).toBe('60');
    expect((await send(proxy.url, '/openapi.json', { from: '127.0.0.5' })).status).toBe(200);
  });

  it("passes WebSocket subscriptions through, and their events", async () => {
    const client = createClient({ url: `${proxy.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, onNonLazyError: () => undefined });
    let feed: Feed | undefined;
    try {
      feed = subscribe(client, 'subscription($ids: [ID!]) { petChanged(ids: $ids) { kind pet { name } } }', { ids: [petId] });
      await waitFor(async () => (await activeSubscriptions()) === 1, WITHIN_MS, 'the subscription to be active');
      expect((await renamePet('Rex over WebSocket')).status).toBe(200);
      await feed.until(1, WITHIN_MS);
      expect(feed.events).toEqual([{ data: { petChanged: { kind: 'UPDATED', pet: { name: 'Rex over WebSocket' } } } }]);
    } finally {
      feed?.stop();
      await client.dispose();
    }
    await waitFor(async () => (await activeSubscriptions()) === 0, WITHIN_MS, 'the subscription to end');
  });

  it('streams server-sent events as they come, unbuffered', async () => {
    let received = '';
    let ended = false;
    let arrived: () => void = () => undefined;
    const event = new Promise<void>((resolve) => (arrived = resolve));
    const stream = request(`${proxy.url}/graphql/stream`, { method: 'POST', agent: false, headers: { Accept: 'text/event-stream', 'Content-Type': 'application/json' } }, (response) => {
      expect(response.statusCode).toBe(200);
      response.on('data', (chunk: Buffer) => {
        received += chunk.toString();
        if (received.includes('Rex over SSE')) arrived();
      });
      response.on('end', () => (ended = true));
    });
    stream.on('error', () => undefined);
    stream.end(JSON.stringify({ query: 'subscription($ids: [ID!]) { petChanged(ids: $ids) { kind pet { name } } }', variables: { ids: [petId] } }));
    try {
      await waitFor(async () => (await activeSubscriptions()) === 1, WITHIN_MS, 'the stream to be subscribed');
      expect((await renamePet('Rex over SSE')).status).toBe(200);
      await event;
      // The event came while the stream is open: nginx passed it on as it was written.
      expect(ended).toBe(false);
      expect(received).toMatch(/event: next\ndata: .*"petChanged":\{"kind":"UPDATED","pet":\{"name":"Rex over SSE"\}\}/);
    } finally {
      stream.destroy();
    }
    await waitFor(async () => (await activeSubscriptions()) === 0, WITHIN_MS, 'the stream to end');
  });

  it("refuses an anonymous address's connections past its limit with the Error object, and serves other addresses", async () => {
    const from = '127.0.0.6';
    const held: PartRequest[] = [];
    try {
      // Requests whose body never comes: nginx holds them, the instances never see them.
      for (let opened = 0; opened < ANONYMOUS_CONNECTIONS; opened += 1) {
        held.push(await partRequest(proxy.url, { path: '/graphql', body: '{"query":"{ __typename }"}', sentBytes: 0, localAddress: from }));
      }
      let refused: Answer | undefined;
      await waitFor(async () => (refused = await send(proxy.url, '/openapi.json', { from })).status === 429, WITHIN_MS, 'a refusal past the limit');
      expect(refused!.body).toEqual({ code: 'RATE_LIMITED', message: 'Too many requests or connections from this address at once; retry in 1 s', status: 429 });
      expect(refused!.headers['retry-after']).toBe('1');
      expect(refused!.headers['content-type']).toBe('application/json');
      expect((await send(proxy.url, '/openapi.json', { from: '127.0.0.7' })).status).toBe(200);
    } finally {
      held.forEach((part) => part.reset());
    }
    await waitFor(async () => (await send(proxy.url, '/openapi.json', { from })).status === 200, WITHIN_MS, 'the address to be served again');
  });

  it('passes each request, a POST included, to the live instance while the other refuses connections', async () => {
    // Round robin sends one of the first two requests to the closed port; nginx must pass it on.
    const halfDown = await startNginx([await freePort(), Number(new URL(instances[0].url).port)]);
    try {
      const answers: number[] = [];
      for (let sent = 0; sent < 2; sent += 1) {
        answers.push((await send(halfDown.url, '/graphql', { method: 'POST', headers: { 'X-API-Key': adminKey }, body: { query: '{ __typename }' } })).status);
        answers.push((await send(halfDown.url, `/pets/${petId}`, { headers: { 'X-API-Key': adminKey } })).status);
      }
      expect(answers).toEqual([200, 200, 200, 200]);
    } finally {
      await halfDown.stop();
    }
  });

  it('answers the Error object, 503 with Retry-After, when no instance answers', async () => {
    const unreachable = await startNginx([await freePort(), await freePort()]);
    try {
      const posted = await send(unreachable.url, '/graphql', { method: 'POST', body: { query: '{ __typename }' } });
      expect({ status: posted.status, body: posted.body }).toEqual({
        status: 503,
        body: { errors: [{ message: expect.any(String), extensions: { code: 'SERVICE_UNAVAILABLE', status: 503 } }] },
      });
      const rest = await send(unreachable.url, `/pets/${petId}`);
      expect({ status: rest.status, body: rest.body, retryAfter: rest.headers['retry-after'] }).toEqual({
        status: 503,
        body: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), status: 503 },
        retryAfter: '5',
      });
    } finally {
      await unreachable.stop();
    }
  });
});
