import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { ApolloClient, ApolloLink, gql as apolloGql, HttpLink, InMemoryCache, split } from '@apollo/client';
import { getMainDefinition } from '@apollo/client/utilities';
import { print } from 'graphql';
import { filter, firstValueFrom, Observable } from 'rxjs';
import { type Client as SseClient, createClient, NetworkError } from 'graphql-sse';
import type { Client } from 'graphql-ws';
import pino from 'pino';
import { startGateway } from '../../src/gateway';
import { CHANGES_CHANNEL } from '../../src/sql/notify';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, placeOrder, setStock, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, caughtUp, eventually, type Feed, liveSession, subscribed, subscribe } from '../helpers/live';

/** Subscriptions over Server-Sent Events at /graphql/stream (docs/contract.md §9), with graphql-sse's own client. */
let a: TestApp;
let b: TestApp;
const live = liveSession();
const sse: SseClient[] = [];
const sseFeeds: Feed[] = [];
beforeAll(async () => {
  const limiterKeyPrefix = `test:${randomBytes(6).toString('hex')}`;
  // A ban is found at the next key check: a fifth of a second here, not production's 2.5 s.
  const liveTimings = { keyRecheckMs: 200 };
  a = await startTestApp({ BAN_THRESHOLD: '1' }, { limiterKeyPrefix, liveTimings });
  b = await startTestApp({ BAN_THRESHOLD: '1', ADMIN_API_KEY: a.adminKey }, { db: a.db, limiterKeyPrefix, liveTimings });
});
afterEach(async () => {
  sseFeeds.splice(0).forEach((feed) => feed.stop());
  sse.splice(0).forEach((client) => client.dispose());
  await live.closeAll();
  await eventually(async () => (await activeSubscriptions(a)) + (await activeSubscriptions(b)) === 0);
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const streamUrl = (t: TestApp) => `${t.url}/graphql/stream`;

/** graphql-sse's client in distinct connections mode, on Node's fetch; no retries, so that refusals surface. */
function sseClient(t: TestApp, key?: string): SseClient {
  const client = createClient({ url: streamUrl(t), fetchFn: fetch, retryAttempts: 0, headers: key ? { 'X-API-Key': key } : undefined });
  sse.push(client);
  return client;
}

function watchSse(t: TestApp, query: string, variables?: Record<string, unknown>, key?: string): Feed {
  const feed = subscribe(sseClient(t, key) as unknown as Client, query, variables);
  sseFeeds.push(feed);
  return feed;
}

/** What a refused stream's client reports: the HTTP status and the Error object of its body. */
async function refusalOf(feed: Feed): Promise<{ status: number; code: string; headers: Headers }> {
  await feed.until(1);
  expect(feed.error).toBeInstanceOf(NetworkError);
  const response = (feed.error as NetworkError<Response>).response as Response;
  const body = (await response.json()) as { errors: { extensions: { code: string; status: number } }[] };
  expect(body.errors[0].extensions.status).toBe(response.status);
  return { status: response.status, code: body.errors[0].extensions.code, headers: response.headers };
}

/** One stream opened by hand, as an EventSource or curl would. */
function post(t: TestApp, body: unknown, headers: Record<string, string> = {}, method = 'POST') {
  return fetch(streamUrl(t), {
    method,
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers },
    body: method === 'GET' ? undefined : JSON.stringify(body),
  });
}

const INVENTORY = 'subscription($petIds: [ID!]) { inventoryChanged(petIds: $petIds) { petId quantity status } }';
const ORDERS = 'subscription { orderChanged { kind order { petId quantity } } }';

describe('delivery', () => {
  it('sends the same events as a graphql-ws subscriber, in commit order, on either instance', async () => {
    const petId = await stockedPet(a, 5);
    const { key } = await createApiKey(a, { plan: 'PRO' });
    await caughtUp(a);
    await caughtUp(b);
    const overWs = live.watch(live.client(a), INVENTORY, { petIds: [petId] });
    const overSse = watchSse(a, INVENTORY, { petIds: [petId] });
    const otherInstance = watchSse(b, INVENTORY, { petIds: [petId] });
    const orders = watchSse(a, ORDERS, undefined, key);
    await subscribed(a, 3);
    await subscribed(b, 1);

    for (const quantity of [4, 9, 1]) await setStock(a, petId, quantity);
    await placeOrder(a, key, petId, 1);
    await overWs.until(4);
    await overSse.until(4);
    await otherInstance.until(4);
    await orders.until(1);
    const quantities = [4, 9, 1, 0];
    expect(overWs.events.map((event) => event.data?.inventoryChanged.quantity)).toEqual(quantities);
    expect(overSse.events).toEqual(overWs.events);
    expect(otherInstance.events).toEqual(overWs.events);
    expect(orders.events).toEqual([{ data: { orderChanged: { kind: 'PLACED', order: { petId, quantity: 1 } } } }]);
  });

  it('serves GET with the search parameters, as an EventSource sends them', async () => {
    const petId = await stockedPet(a, 5);
    await caughtUp(a);
    const search = new URLSearchParams({ query: INVENTORY, variables: JSON.stringify({ petIds: [petId] }) });
    const response = await fetch(`${streamUrl(a)}?${search}`, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await subscribed(a, 1);
    await setStock(a, petId, 3);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: next')) text += (await reader.read()).value ?? '';
    while (!text.endsWith('\n\n')) text += (await reader.read()).value ?? '';
    expect(text).toContain(`event: next\ndata: {"data":{"inventoryChanged":{"petId":"${petId}","quantity":3,"status":"AVAILABLE"}}}\n\n`);
    await reader.cancel();
  });
});

describe('refusals', () => {
  it('reports document errors as a next event on an accepted stream, then completes', async () => {
    const feed = watchSse(a, 'subscription { inventoryChanged { nope } }');
    await feed.until(1);
    await eventually(() => feed.completed);
    expect(feed.error).toBeUndefined();
    expect(feed.events[0].errors?.[0].extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED', status: 400 });
  });

  it('answers everything known before the stream opens with its status and the Error object', async () => {
    expect(await refusalOf(watchSse(a, '{ __typename }'))).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(await refusalOf(watchSse(a, ORDERS))).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect(await refusalOf(watchSse(a, ORDERS, undefined, 'psk_not_a_real_key_000000000000000000000'))).toMatchObject({ status: 401, code: 'INVALID_API_KEY' });

    const put = await post(a, {}, { accept: '*/*' }, 'PUT');
    expect(put.status).toBe(405);
    expect(((await put.json()) as any).errors[0].message).toContain('single connection mode is not served');
    const json = await post(a, { query: INVENTORY }, { accept: 'application/json' });
    expect(json.status).toBe(406);
    const large = await post(a, { query: INVENTORY, padding: 'x'.repeat(1024 * 1024) });
    expect(large.status).toBe(413);
  });

  it('counts each stream once in the windows, with rate-limit headers, and refuses past them with Retry-After', async () => {
    const { key } = await createApiKey(a, { plan: 'ENTERPRISE', requestsPerMinute: 2, requestsPerDay: 100 });
    const first = await post(a, { query: INVENTORY }, { 'X-API-Key': key });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    await first.body?.cancel();
    expect((await gql(a.url, '{ __typename }', undefined, { key })).status).toBe(200);
    const refused = await refusalOf(watchSse(a, INVENTORY, undefined, key));
    expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('ends the stream of a key banned on another surface within the recheck, with the refusal as its last result', async () => {
    const { key } = await createApiKey(a, { plan: 'ENTERPRISE', requestsPerMinute: 2, requestsPerDay: 100 });
    const feed = watchSse(a, INVENTORY, undefined, key);
    await subscribed(a, 1);
    const statuses: number[] = [];
    const other = process.env.REDIS_URL ? b : a;
    for (let i = 0; i < 3; i++) statuses.push((await gql(other.url, '{ __typename }', undefined, { key })).status);
    expect(statuses).toEqual([200, 429, 403]);
    const bannedAt = Date.now();
    await feed.until(1, 10_000);
    expect(feed.events[0].errors?.[0].extensions).toEqual({ code: 'API_KEY_BANNED', status: 403 });
    await eventually(() => feed.completed);
    expect(Date.now() - bannedAt).toBeLessThan(10_000);
    expect(await refusalOf(watchSse(a, INVENTORY, undefined, key))).toMatchObject({ status: 403, code: 'API_KEY_BANNED' });
  }, 15_000);
});

describe('a client that stops reading', () => {
  it('has its stream cut once over 1 MiB is unsent, the events counted as dropped', async () => {
    const dropped = async () => (await a.app.metrics.registry.getSingleMetric('petstore_live_events_dropped_total')?.get())?.values.reduce((sum, { value }) => sum + value, 0) ?? 0;
    const before = await dropped();
    // About 8 KB an event: 400 aliases of one field.
    const fields = Array.from({ length: 400 }, (_, i) => `f${i}: quantity`).join(' ');
    const body = JSON.stringify({ query: `subscription { inventoryChanged(petIds: ["999999"]) { ${fields} } }` });
    const { port } = new URL(a.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.write(`POST /graphql/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    // The answer's head is read; then the client reads nothing more.
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.pause();
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await subscribed(a, 1);
    // Stock events straight onto the channel, as commits announce them: enough to fill any socket buffer.
    const sql = `SELECT pg_notify($1, json_build_object('type', 'stock', 'petId', '999999', 'quantity', g, 'status', 'sold')::text) FROM generate_series(1, 1000) g`;
    for (let i = 0; i < 10 && a.app.streams.openStreams() > 0; i++) await a.db.dataSource.query(sql, [CHANGES_CHANNEL]);
    await eventually(() => a.app.streams.openStreams() === 0);
    expect(await dropped()).toBeGreaterThan(before);
    socket.resume();
    await ended;
  });
});

describe('caps shared with WebSockets', () => {
  it('holds FREE to 5 subscriptions: 3 over WebSocket and 2 over SSE, the 6th refused on either transport and instance', async () => {
    const { key } = await createApiKey(a, { plan: 'FREE' });
    const socket = live.client(a, key);
    for (let i = 0; i < 3; i++) live.watch(socket, INVENTORY);
    await subscribed(a, 3);
    watchSse(a, INVENTORY, undefined, key);
    // Without Redis each instance counts its own slots: the cap across instances is checked with it.
    const second = process.env.REDIS_URL ? b : a;
    watchSse(second, INVENTORY, undefined, key);
    await eventually(async () => (await activeSubscriptions(a)) + (await activeSubscriptions(b)) === 5);

    expect(await refusalOf(watchSse(second, INVENTORY, undefined, key))).toMatchObject({ status: 429, code: 'TOO_MANY_SUBSCRIPTIONS' });
    const overWs = live.watch(socket, INVENTORY);
    await overWs.until(1);
    expect(overWs.error?.[0]?.extensions?.code).toBe('TOO_MANY_SUBSCRIPTIONS');
    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    expect(metrics).toContain(`petstore_live_streams ${second === a ? 2 : 1}\n`);
  });
});

/** The link of docs/front-end-clients.md: Apollo Client 4 over graphql-sse's client. */
class SseLink extends ApolloLink {
  constructor(private readonly client: SseClient) {
    super();
  }

  override request(operation: ApolloLink.Operation): Observable<ApolloLink.Result> {
    return new Observable((sink) =>
      this.client.subscribe<ApolloLink.Result['data']>(
        { query: print(operation.query), variables: operation.variables, operationName: operation.operationName },
        { next: (result) => sink.next(result as ApolloLink.Result), complete: () => sink.complete(), error: (error) => sink.error(error) },
      ),
    );
  }
}

describe('Apollo Client', () => {
  it('receives events through the front-end guide’s link, subscriptions split from HTTP', async () => {
    const petId = await stockedPet(a, 4);
    const isSubscription = ({ query }: ApolloLink.Operation) => {
      const definition = getMainDefinition(query);
      return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
    };
    const client = new ApolloClient({
      link: split(isSubscription, new SseLink(sseClient(a)), new HttpLink({ uri: `${a.url}/graphql` })),
      cache: new InMemoryCache({ typePolicies: { InventoryItem: { keyFields: ['petId'] } } }),
    });
    await caughtUp(a);
    const events = client.subscribe<{ inventoryChanged: { petId: string; quantity: number } }>({
      query: apolloGql`subscription Stock($ids: [ID!]) { inventoryChanged(petIds: $ids) { petId quantity } }`,
      variables: { ids: [petId] },
    });
    const first = firstValueFrom(events.pipe(filter((result) => !!result.data)));
    await subscribed(a, 1);
    await setStock(a, petId, 2);
    expect((await first).data?.inventoryChanged).toEqual({ __typename: 'InventoryItem', petId, quantity: 2 });
  });
});

describe('shutdown', () => {
  it('ends open streams once HTTP requests have drained, without waiting for the grace period', async () => {
    const env = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}` };
    // A third instance on the others' database, which it leaves open when it closes.
    const gateway = await startGateway({ env: { ...env, ...(process.env.REDIS_URL && { REDIS_URL: process.env.REDIS_URL }) }, database: a.db, logger: pino({ level: 'silent' }) });
    const client = createClient({ url: `${gateway.url}/graphql/stream`, fetchFn: fetch, retryAttempts: 0 });
    sse.push(client);
    const feed = subscribe(client as unknown as Client, INVENTORY);
    await eventually(() => gateway.app.streams.openStreams() === 1);
    const started = Date.now();
    await gateway.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    await feed.until(1);
    expect(feed.error).toBeDefined();
    expect(feed.completed).toBe(false);
  });
});
