import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, eventually, subscribed, wsUrl } from '../helpers/live';
import { acknowledgedSocket, rawSocket } from '../helpers/raw-socket';

/** Keys over WebSocket (docs/contract.md §9 "Keys", "Sockets"). */
let t: TestApp;
beforeAll(async () => {
  // A ban is found at the next key check: a fifth of a second here, not production's 2.5 s.
  t = await startTestApp({ BAN_THRESHOLD: '1' }, { liveTimings: { keyRecheckMs: 200 } });
});
afterEach(() => eventually(async () => (await activeSubscriptions(t)) === 0));
afterAll(() => t.close());

const INVALID = { code: 4403, reason: 'INVALID_API_KEY' };

describe('a key that is not a valid string', () => {
  it.each([
    ['a number', 12345],
    ['an array', ['psk_x']],
    ['an object', { key: 'psk_x' }],
    ['null', null],
    ['an empty string', ''],
  ])('in connection_init (%s) closes 4403 INVALID_API_KEY, never anonymous', async (_name, value) => {
    const socket = await rawSocket(wsUrl(t));
    socket.send({ type: 'connection_init', payload: { 'X-API-Key': value } });
    expect(await socket.closed).toEqual(INVALID);
  });

  it('in the upgrade header closes 4403 INVALID_API_KEY even with a valid key in connection_init', async () => {
    const { key } = await createApiKey(t, { plan: 'PRO' });
    const socket = await rawSocket(wsUrl(t), { headers: { 'X-API-Key': 'psk_not_a_real_key_000000000000000000000' } });
    socket.send({ type: 'connection_init', payload: { 'X-API-Key': key } });
    expect(await socket.closed).toEqual(INVALID);
  });

  it('in connection_init closes 4403 INVALID_API_KEY even with a valid key in the header', async () => {
    const { key } = await createApiKey(t, { plan: 'PRO' });
    const socket = await rawSocket(wsUrl(t), { headers: { 'X-API-Key': key } });
    socket.send({ type: 'connection_init', payload: { 'X-API-Key': 'psk_not_a_real_key_000000000000000000000' } });
    expect(await socket.closed).toEqual(INVALID);
  });
});

describe('a key banned over HTTP while its socket is open', () => {
  it('loses its subscriptions within 10 s: the socket closes 4403 API_KEY_BANNED', async () => {
    const { key } = await createApiKey(t, { plan: 'ENTERPRISE', requestsPerMinute: 2, requestsPerDay: 100 });
    const socket = await acknowledgedSocket(wsUrl(t), key);
    socket.send({ id: 'o', type: 'subscribe', payload: { query: 'subscription { orderChanged { id } }' } });
    await subscribed(t, 1);
    // One subscribe counted: one more request fits, the next is refused, the one after bans.
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await gql(t.url, '{ __typename }', undefined, { key })).status);
    expect(statuses).toEqual([200, 429, 403]);
    const bannedAt = Date.now();
    expect(await socket.closed).toEqual({ code: 4403, reason: 'API_KEY_BANNED' });
    expect(Date.now() - bannedAt).toBeLessThan(10_000);
  }, 15_000);
});
