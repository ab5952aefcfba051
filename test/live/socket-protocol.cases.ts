import request from 'supertest';
import WebSocket from 'ws';
import { CONNECTION_INIT_TIMEOUT_MS } from '../../src/pipeline/ws/websocket.server';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, setStock, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { caughtUp, liveClient, subscribe, subscribed, wsUrl } from '../helpers/live';
import { acknowledgedSocket, type RawSocketOptions, rawSocket } from '../helpers/raw-socket';
import { stillServing } from './still-serving';

let t: TestApp;
beforeAll(async () => {
  // A revoked key is found at the next check: a fifth of a second here, not production's 2.5 s.
  t = await startTestApp({}, { liveTimings: { keyRecheckMs: 200 } });
});
afterAll(() => t.close());

const raw = (options?: RawSocketOptions) => rawSocket(wsUrl(t), options);
const acknowledged = (key?: string) => acknowledgedSocket(wsUrl(t), key);

describe('socket refusals by protocol close codes', () => {
  it.each([
    ['a message that is not JSON', '{"type": "connection_init"', 4400],
    ['an unknown message type', { type: 'shout', payload: {} }, 4400],
    ['a subscribe without an id', { type: 'subscribe', payload: { query: 'subscription { petChanged { id } }' } }, 4400],
  ])('closes on %s with %p', async (_name, message, code) => {
    const socket = await acknowledged();
    socket.send(message);
    expect((await socket.closed).code).toBe(code);
    await stillServing(t);
  });

  it('closes 4401 on a subscribe before connection_init', async () => {
    const socket = await raw();
    socket.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { petChanged { id } }' } });
    expect(await socket.closed).toEqual({ code: 4401, reason: 'Unauthorized' });
  });

  it('closes 4408 when connection_init does not come within its timeout (3 s unless configured)', async () => {
    expect(CONNECTION_INIT_TIMEOUT_MS).toBe(3_000);
    // The same gateway on the same database, waiting a third of a second for connection_init.
    const impatient = await startTestApp({ ADMIN_API_KEY: t.adminKey }, { db: t.db, liveTimings: { connectionInitTimeoutMs: 300 } });
    try {
      const socket = await rawSocket(wsUrl(impatient));
      const started = Date.now();
      expect((await socket.closed).code).toBe(4408);
      expect(Date.now() - started).toBeLessThan(1_800);
      await stillServing(impatient);
    } finally {
      await impatient.close();
    }
  });

  it('closes 1009 on a message over 100 KiB', async () => {
    const socket = await acknowledged();
    socket.send({ id: '1', type: 'subscribe', payload: { query: `subscription { petChanged { id } } # ${'x'.repeat(110_000)}` } });
    expect((await socket.closed).code).toBe(1009);
    await stillServing(t);
  });

  it('closes 4406 when the client asks for no subprotocol, and offers none but graphql-transport-ws', async () => {
    const socket = await raw({ protocol: null });
    expect((await socket.closed).code).toBe(4406);
    await expect(raw({ protocol: 'graphql-ws' })).rejects.toThrow('Server sent no subprotocol');
  });

  it('closes 4403 with the code as reason for an invalid key, in connection_init or the upgrade header', async () => {
    const socket = await raw();
    socket.send({ type: 'connection_init', payload: { 'X-API-Key': 'psk_not_a_real_key_000000000000000000000' } });
    expect(await socket.closed).toEqual({ code: 4403, reason: 'INVALID_API_KEY' });
    const byHeader = await raw({ headers: { 'X-API-Key': 'psk_not_a_real_key_000000000000000000000' } });
    byHeader.send({ type: 'connection_init' });
    expect(await byHeader.closed).toEqual({ code: 4403, reason: 'INVALID_API_KEY' });
  });

  it('takes the key from the upgrade header', async () => {
    const { key } = await createApiKey(t, { plan: 'PRO' });
    const socket = await raw({ headers: { 'X-API-Key': key } });
    socket.send({ type: 'connection_init' });
    expect(await socket.next()).toEqual({ type: 'connection_ack' });
    socket.send({ id: 'o', type: 'subscribe', payload: { query: 'subscription { orderChanged { id } }' } });
    await subscribed(t, 1);
    socket.socket.close();
  });

  it('disconnects a key revoked while connected within 10 s', async () => {
    const { key, id } = await createApiKey(t, { plan: 'PRO' });
    const socket = await acknowledged(key);
    await gql(t.url, `mutation { revokeApiKey(id: "${id}") { id } }`, undefined, { key: t.adminKey });
    const started = Date.now();
    expect(await socket.closed).toEqual({ code: 4403, reason: 'INVALID_API_KEY' });
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 15_000);
});

describe('subscribe refusals by error messages, the socket staying open', () => {
  it.each([
    ['a query sent as subscribe', '{ pets(first: 1) { totalCount } }', 'BAD_REQUEST'],
    ['a mutation sent as subscribe', 'mutation { deletePet(id: "1") }', 'BAD_REQUEST'],
    ['a document that does not parse', 'subscription {', 'GRAPHQL_PARSE_FAILED'],
    ['an unknown field', 'subscription { stockTicker { id } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['two root fields', 'subscription { petChanged { id } inventoryChanged { petId } }', 'GRAPHQL_VALIDATION_FAILED'],
    [
      'a document deeper than 10',
      'subscription { petChanged { pet { category { pets { nodes { category { pets { nodes { category { pets { nodes { id } } } } } } } } } } } }',
      'QUERY_TOO_COMPLEX',
    ],
    ['a document costlier than the limit', 'subscription { petChanged { pet { category { pets(first: 100) { nodes { category { pets(first: 100) { nodes { id } } } } } } } } }', 'QUERY_TOO_COMPLEX'],
  ])('refuses %s', async (_name, query, code) => {
    const socket = await acknowledged();
    socket.send({ id: 'x', type: 'subscribe', payload: { query } });
    const refusal = await socket.next();
    expect(refusal).toEqual({ id: 'x', type: 'error', payload: [expect.objectContaining({ extensions: expect.objectContaining({ code }) })] });
    expect(socket.socket.readyState).toBe(WebSocket.OPEN);
    socket.send({ type: 'ping' });
    expect(await socket.next()).toEqual({ type: 'pong' });
    socket.socket.close();
  });

  it('refuses a second subscribe with an id in use by closing 4409', async () => {
    const socket = await acknowledged();
    socket.send({ id: 'same', type: 'subscribe', payload: { query: 'subscription { petChanged { id } }' } });
    socket.send({ id: 'same', type: 'subscribe', payload: { query: 'subscription { petChanged { id } }' } });
    expect((await socket.closed).code).toBe(4409);
    await stillServing(t);
  });
});

describe('the upgrade', () => {
  it('is served on /graphql only', async () => {
    const response = await request(t.url)
      .get('/elsewhere')
      .set('Connection', 'Upgrade')
      .set('Upgrade', 'websocket')
      .set('Sec-WebSocket-Version', '13')
      .set('Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ==');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ code: 'NOT_FOUND', message: expect.any(String), status: 404 });
  });

  it("accepts the browser origins CORS allows (Apollo Sandbox's) and the gateway's own, and refuses others with 403", async () => {
    const sandbox = await raw({ headers: { Origin: 'https://studio.apollographql.com' } });
    sandbox.send({ type: 'connection_init' });
    expect(await sandbox.next()).toEqual({ type: 'connection_ack' });
    sandbox.socket.close();
    const landingPage = await raw({ headers: { Origin: t.url } });
    landingPage.send({ type: 'connection_init' });
    expect(await landingPage.next()).toEqual({ type: 'connection_ack' });
    landingPage.socket.close();
    await expect(raw({ headers: { Origin: 'https://evil.example' } })).rejects.toThrow('Unexpected server response: 403');
  });

  it('counts nothing: connecting leaves the windows as they were', async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const before = await gql(t.url, '{ rateLimit { remaining } }', undefined, { key });
    const sockets = await Promise.all([acknowledged(key), acknowledged(key), acknowledged(key)]);
    const after = await gql(t.url, '{ rateLimit { remaining } }', undefined, { key });
    expect(after.data?.rateLimit.remaining).toBe(before.data?.rateLimit.remaining - 1);
    sockets.forEach((socket) => socket.socket.close());
  });
});

describe('metrics', () => {
  it('counts open sockets, active subscriptions by operation, and events published and delivered', async () => {
    const petId = await stockedPet(t, 1);
    await caughtUp(t);
    const client = liveClient(t);
    const feed = subscribe(client, 'subscription($p: [ID!]) { inventoryChanged(petIds: $p) { quantity } }', { p: [petId] });
    await subscribed(t, 1);
    await setStock(t, petId, 2);
    await feed.until(1);
    const text = (await request(t.url).get('/metrics')).text;
    expect(text).toMatch(/^petstore_live_sockets [1-9]/m);
    expect(text).toMatch(/^petstore_live_subscriptions\{operation="inventoryChanged"\} 1$/m);
    expect(text).toMatch(/^petstore_live_events_published_total\{type="stock"\} [1-9]/m);
    expect(text).toMatch(/^petstore_live_events_delivered_total\{operation="inventoryChanged"\} [1-9]/m);
    expect(text).toMatch(/^# HELP petstore_live_events_dropped_total /m);
    await client.dispose();
  });
});
