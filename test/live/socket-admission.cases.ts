import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { wsUrl } from '../helpers/live';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { acknowledgedSocket, type RawSocket, rawSocket, refusedUpgrade } from '../helpers/raw-socket';

/**
 * Sockets are admitted like requests (docs/contract.md §9 "Sockets"): per address, a bound on
 * sockets that have not finished connection_init; per identity, a bound on open sockets by plan;
 * per instance, a ceiling (MAX_SOCKETS here, so that the test need not open hundreds).
 */
const CEILING = 40;
let t: TestApp;
let log: CapturedLog;
const opened: RawSocket[] = [];
beforeAll(async () => {
  log = captureLog('warn');
  t = await startTestApp({ MAX_SOCKETS: String(CEILING) }, { logger: log.logger });
});
afterEach(async () => {
  const sockets = opened.splice(0);
  sockets.forEach((socket) => socket.socket.close());
  await Promise.all(sockets.map((socket) => socket.closed));
});
afterAll(() => t.close());

const open = async (headers?: Record<string, string>) => {
  const socket = await rawSocket(wsUrl(t), { headers });
  opened.push(socket);
  return socket;
};
const acknowledged = async (key?: string, headers?: Record<string, string>) => {
  const socket = await acknowledgedSocket(wsUrl(t), key, { headers });
  opened.push(socket);
  return socket;
};
const refusals = async (reason: string) => {
  const text = (await request(t.url).get('/metrics')).text;
  return Number(new RegExp(`^petstore_live_socket_refusals_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
};
const TOO_MANY = { code: 'RATE_LIMITED', message: expect.any(String), status: 429 };

describe('per client address, sockets that have not sent connection_init', () => {
  it('are bounded at 16: the 17th upgrade is refused with 429 and Retry-After before the handshake', async () => {
    const before = await refusals('pending_per_address');
    const pending = await Promise.all(Array.from({ length: 16 }, () => open()));
    const refused = await refusedUpgrade(wsUrl(t));
    expect(refused).toMatchObject({ status: 429, body: TOO_MANY });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await refusals('pending_per_address')).toBe(before + 1);
    expect(log.messages('warn')).toContain('WebSocket refused');

    // One finishes its handshake: its place is free for another.
    pending[0].send({ type: 'connection_init' });
    expect(await pending[0].next()).toEqual({ type: 'connection_ack' });
    await open();
  });

  it('are logged as a flood: one line per address and bound per interval, however many are refused', async () => {
    const pending = await Promise.all(Array.from({ length: 16 }, () => open()));
    const before = await refusals('pending_per_address');
    const lines = () => log.messages('warn').filter((message) => message === 'WebSocket refused').length;
    const linesBefore = lines();
    for (let i = 0; i < 20; i++) expect((await refusedUpgrade(wsUrl(t))).status).toBe(429);
    expect(await refusals('pending_per_address')).toBe(before + 20);
    // At most the first of a new interval; the rest are summed up when it ends.
    expect(lines() - linesBefore).toBeLessThanOrEqual(1);
    expect(pending).toHaveLength(16);
  });
});

describe('per identity, open sockets by plan', () => {
  it('lets a FREE key hold 10; the 11th is refused 429 at the upgrade when the key is in its header', async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    for (let i = 0; i < 10; i++) await acknowledged(undefined, { 'X-API-Key': key });
    const refused = await refusedUpgrade(wsUrl(t), { headers: { 'X-API-Key': key } });
    expect(refused).toMatchObject({ status: 429, body: TOO_MANY });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await refusals('open_per_identity')).toBeGreaterThan(0);
  });

  it('closes the 11th with 4429 RATE_LIMITED when the key comes in connection_init', async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    for (let i = 0; i < 10; i++) await acknowledged(key);
    const eleventh = await open();
    eleventh.send({ type: 'connection_init', payload: { 'X-API-Key': key } });
    expect(await eleventh.closed).toEqual({ code: 4429, reason: 'RATE_LIMITED' });

    // Closing one frees its place.
    const first = opened.shift() as RawSocket;
    first.socket.close();
    await first.closed;
    await acknowledged(key);
  });
});

describe('per instance, the ceiling', () => {
  it('refuses upgrades over MAX_SOCKETS with 429, while HTTP, /healthz and admins are still served', async () => {
    const keys = await Promise.all(Array.from({ length: 4 }, () => createApiKey(t, { plan: 'PRO' })));
    for (let i = 0; i < CEILING; i++) await acknowledged(keys[i % keys.length].key);
    const refused = await refusedUpgrade(wsUrl(t), { headers: { 'X-API-Key': t.adminKey } });
    expect(refused).toMatchObject({ status: 429, body: TOO_MANY });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await refusals('instance_ceiling')).toBeGreaterThan(0);

    expect((await request(t.url).get('/healthz')).status).toBe(200);
    expect((await gql(t.url, '{ pets(first: 1) { totalCount } }')).status).toBe(200);
    expect((await gql(t.url, '{ apiKeys(first: 1) { nodes { id } } }', undefined, { key: t.adminKey })).status).toBe(200);
  });
});
