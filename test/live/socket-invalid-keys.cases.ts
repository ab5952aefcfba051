import request from 'supertest';
import { generateApiKey } from '../../src/auth/key-secret';
import { startTestApp, type TestApp } from '../helpers/app';
import { wsUrl } from '../helpers/live';
import { rawSocket } from '../helpers/raw-socket';

/**
 * Invalid keys over WebSocket count against the client address as over HTTP (docs/contract.md §5,
 * §9): 4403 INVALID_API_KEY while the address has quota, then 4429 RATE_LIMITED, then a ban
 * (4403 CLIENT_BANNED), which HTTP answers too.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ BAN_THRESHOLD: '1' });
});
afterAll(() => t.close());

/** How a socket presenting a random key in `connection_init` (or its upgrade header) is closed. */
async function closeOfInvalidKey(where: 'payload' | 'header' = 'payload'): Promise<{ code: number; reason: string }> {
  const key = generateApiKey();
  const socket = await rawSocket(wsUrl(t), where === 'header' ? { headers: { 'X-API-Key': key } } : {});
  socket.send({ type: 'connection_init', payload: where === 'payload' ? { 'X-API-Key': key } : {} });
  return socket.closed;
}

const remaining = async () => Number((await request(t.url).get('/openapi.json')).headers['x-ratelimit-remaining']);

it('counts each socket with an invalid key once against its address, in the payload or the header', async () => {
  const before = await remaining();
  expect(await closeOfInvalidKey('payload')).toEqual({ code: 4403, reason: 'INVALID_API_KEY' });
  expect(await closeOfInvalidKey('header')).toEqual({ code: 4403, reason: 'INVALID_API_KEY' });
  // Two sockets and the request asking.
  expect(await remaining()).toBe(before - 3);
});

it('closes an address over its quota with 4429 RATE_LIMITED, then bans it, over WebSocket and HTTP alike', async () => {
  const closes: string[] = [];
  // What is left of the anonymous minute, spent on invalid keys.
  for (let left = await remaining(); left > 0; left--) closes.push(`${(await closeOfInvalidKey()).code}`);
  expect(new Set(closes)).toEqual(new Set(['4403']));
  expect(await closeOfInvalidKey()).toEqual({ code: 4429, reason: 'RATE_LIMITED' });
  // BAN_THRESHOLD 1: the next refusal starts the ban.
  expect(await closeOfInvalidKey()).toEqual({ code: 4403, reason: 'CLIENT_BANNED' });
  expect(await closeOfInvalidKey('header')).toEqual({ code: 4403, reason: 'CLIENT_BANNED' });
  const http = await request(t.url).post('/graphql').set('Content-Type', 'application/json').send({ query: '{ __typename }' });
  expect(http.status).toBe(403);
  expect(http.body.errors[0].extensions).toEqual({ code: 'CLIENT_BANNED', status: 403 });
}, 30_000);
