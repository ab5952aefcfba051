import { connect } from 'node:net';
import { PLAN_LIMITS, Plan } from '../../src/auth/plans';
import { identityOf } from '../../src/limits/identity';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { holdTable } from '../helpers/hold';
import { activeSubscriptions, wsUrl } from '../helpers/live';
import { partRequest, statusOf } from '../helpers/raw-http';
import { acknowledgedSocket, rawSocket } from '../helpers/raw-socket';
import { waitFor } from '../helpers/wait';

/**
 * A stream or WebSocket whose client goes away at any stage leaves nothing behind: its places in
 * the socket admission, its subscription, its entry among the open streams (docs/contract.md §9).
 * After each, the identity opens its full bound at once.
 */
const subscriptions = PLAN_LIMITS[Plan.FREE].subscriptions;
const SUBSCRIBE = 'subscription { inventoryChanged { quantity } }';
const STREAM_BODY = JSON.stringify({ query: SUBSCRIBE });
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function freeCaller(): Promise<{ key: string; identity: string }> {
  const { key, id } = await createApiKey(t, { plan: 'FREE' });
  return { key, identity: identityOf({ kind: 'key', key: { id } }) };
}

const streamRequest = (key: string, sentBytes = STREAM_BODY.length) =>
  partRequest(t.url, { path: '/graphql/stream', headers: { 'X-API-Key': key, Accept: 'text/event-stream' }, body: STREAM_BODY, sentBytes });

interface Held {
  streams: number;
  sockets: number;
  subscriptions: number;
  /** Streams and sockets in the admission's counts. */
  admitted: number;
}

async function held(): Promise<Held> {
  const gauge = async (name: string) => (await t.app.metrics.registry.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;
  return {
    streams: await gauge('petstore_live_streams'),
    sockets: await gauge('petstore_live_sockets'),
    subscriptions: await activeSubscriptions(t),
    admitted: t.app.websockets.admission.openCount(),
  };
}

const until = (what: string, holds: (h: Held) => boolean) => waitFor(async () => holds(await held()), 10_000, what, 20);
const nothingHeld = () => until('nothing held', (h) => h.streams === 0 && h.sockets === 0 && h.subscriptions === 0 && h.admitted === 0);

/** The key's lookup pending, behind a lock on the keys, while `during` runs. */
async function whileKeyIsLookedUp(during: (lookedUp: () => Promise<void>) => Promise<void>): Promise<void> {
  const lookups = jest.spyOn(t.app.services.apiKeys, 'authenticate');
  const hold = await holdTable(t, 'api_keys');
  try {
    await during(() => waitFor(() => lookups.mock.results.length > 0, 10_000, 'the key looked up', 20));
  } finally {
    await hold.release();
    await Promise.all(lookups.mock.results.map((result) => result.value as Promise<unknown>));
    lookups.mockRestore();
  }
}

/** The key holds its full bound of streams at once, then lets them go. */
async function opensFullStreamBound(key: string): Promise<void> {
  const streams = await Promise.all(Array.from({ length: subscriptions }, () => streamRequest(key)));
  await until(`${subscriptions} streams open`, (h) => h.streams === subscriptions && h.subscriptions === subscriptions);
  streams.forEach((stream) => stream.reset());
  await nothingHeld();
}

/** The key holds its full bound of subscriptions on a socket at once, then closes it. */
async function subscribesFullBound(key: string): Promise<void> {
  const socket = await acknowledgedSocket(wsUrl(t), key);
  for (let id = 0; id < subscriptions; id += 1) socket.send({ id: String(id), type: 'subscribe', payload: { query: SUBSCRIBE } });
  await until(`${subscriptions} subscriptions`, (h) => h.subscriptions === subscriptions);
  expect(socket.messages.filter((message) => message.type === 'error')).toEqual([]);
  socket.socket.terminate();
  await nothingHeld();
}

describe('an SSE stream whose client goes away', () => {
  it('while its key is looked up takes nothing', async () => {
    const { key } = await freeCaller();
    await whileKeyIsLookedUp(async (lookedUp) => {
      const gone = await streamRequest(key);
      await lookedUp();
      gone.reset();
      await gone.closed;
    });
    await nothingHeld();
    await opensFullStreamBound(key);
  });

  it('while its body arrives gives its places back', async () => {
    const { key } = await freeCaller();
    const gone = await streamRequest(key, 10);
    await until('the stream admitted', (h) => h.admitted === 1);
    gone.reset();
    await nothingHeld();
    await opensFullStreamBound(key);
  });

  it('while its subscription is prepared leaves no entry behind once it is', async () => {
    const { key } = await freeCaller();
    // The subscription's slot is taken only when the test says: the stream is held mid-way.
    const slots = t.app.services.live.slots;
    const acquire = slots.acquire.bind(slots);
    let letThrough!: () => void;
    const gate = new Promise<void>((resolve) => (letThrough = resolve));
    const taking = jest.spyOn(slots, 'acquire').mockImplementation(async (...args) => (await gate, acquire(...args)));
    try {
      const gone = await streamRequest(key);
      await waitFor(() => taking.mock.calls.length > 0, 10_000, 'the slot asked for', 20);
      gone.reset();
      await gone.closed;
      letThrough();
      await Promise.all(taking.mock.results.map((result) => result.value as Promise<unknown>));
    } finally {
      taking.mockRestore();
    }
    await nothingHeld();
    await opensFullStreamBound(key);
  });

  it('while streaming leaves no entry, subscription or place behind', async () => {
    const { key, identity } = await freeCaller();
    const gone = await streamRequest(key);
    await until('the stream open', (h) => h.streams === 1 && h.subscriptions === 1);
    gone.reset();
    await nothingHeld();
    expect(t.app.websockets.admission.openOf(identity)).toBe(0);
    await opensFullStreamBound(key);
  });
});

describe('a WebSocket whose client goes away', () => {
  it('while its connection_init key is looked up takes nothing', async () => {
    const { key } = await freeCaller();
    await whileKeyIsLookedUp(async (lookedUp) => {
      const socket = await rawSocket(wsUrl(t));
      socket.send({ type: 'connection_init', payload: { 'X-API-Key': key } });
      await lookedUp();
      socket.socket.terminate();
      await socket.closed;
    });
    await nothingHeld();
    await subscribesFullBound(key);
  });

  it('while its upgrade header key is looked up takes nothing', async () => {
    const { key } = await freeCaller();
    await whileKeyIsLookedUp(async (lookedUp) => {
      const { hostname, port } = new URL(t.url);
      const socket = connect(Number(port), hostname);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `GET /graphql HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\nX-API-Key: ${key}\r\n\r\n`,
      );
      await lookedUp();
      socket.resetAndDestroy();
    });
    await nothingHeld();
    await subscribesFullBound(key);
  });

  it('while subscribed leaves no subscription or place behind', async () => {
    const { key, identity } = await freeCaller();
    const socket = await acknowledgedSocket(wsUrl(t), key);
    socket.send({ id: '1', type: 'subscribe', payload: { query: SUBSCRIBE } });
    await until('the subscription open', (h) => h.subscriptions === 1 && h.sockets === 1);
    socket.socket.terminate();
    await nothingHeld();
    expect(t.app.websockets.admission.openOf(identity)).toBe(0);
    await subscribesFullBound(key);
  });
});

// Last: the gateway's streams are shut down.
describe('an SSE stream open at shutdown', () => {
  it('is ended at once, and no stream gone before is waited for', async () => {
    const { key } = await freeCaller();
    const stream = await streamRequest(key);
    await until('the stream open', (h) => h.streams === 1);
    await t.app.streams.close();
    // The stream's last chunk is out: graphql-sse keeps the connection alive for the client's next request.
    expect(statusOf(await stream.received('0\r\n\r\n'))).toBe(200);
    await nothingHeld();
    stream.reset();
  });
});
