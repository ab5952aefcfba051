import { type Client as SseClient, createClient } from 'graphql-sse';
import type { Client } from 'graphql-ws';
import { ApiKeyService } from '../../src/auth/api-key.service';
import { LiveResolver } from '../../src/live/live.resolver';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, setStock, stockedPet } from '../helpers/builders';
import { activeSubscriptions, caughtUp, eventually, type Feed, liveSession, subscribe, subscribed } from '../helpers/live';

/**
 * Subscribers of one event whose results cannot differ (the same document, the same values of the
 * variables it uses, the same role) share one execution of it, over either transport, and over SSE
 * one serialized message; callers whose results may differ never share. Seen through real clients.
 */
let t: TestApp;
const live = liveSession();
const sse: SseClient[] = [];
const feeds: Feed[] = [];
beforeAll(async () => {
  // Key checks half a second apart, not production's 2.5 s: far more than the 20 ms between looks
  // at what one check asked, so that no second check runs before the first is counted.
  t = await startTestApp({}, { liveTimings: { keyRecheckMs: 500 } });
});
afterEach(async () => {
  jest.restoreAllMocks();
  feeds.splice(0).forEach((feed) => feed.stop());
  sse.splice(0).forEach((client) => client.dispose());
  await live.closeAll();
  await eventually(async () => (await activeSubscriptions(t)) === 0);
});
afterAll(() => t.close());

function watchSse(query: string, variables?: Record<string, unknown>, key?: string): Feed {
  const client = createClient({ url: `${t.url}/graphql/stream`, fetchFn: fetch, retryAttempts: 0, headers: key ? { 'X-API-Key': key } : undefined });
  sse.push(client);
  const feed = subscribe(client as unknown as Client, query, variables);
  feeds.push(feed);
  return feed;
}

const INVENTORY = 'subscription($petIds: [ID!]) { inventoryChanged(petIds: $petIds) { petId quantity status } }';

/** How many times an event's selection was executed: the root field's resolver runs once per execution. */
const executions = () => jest.spyOn(LiveResolver.prototype, 'inventoryChanged');

it('executes an event once for every subscriber of one document and role, over SSE and graphql-ws alike', async () => {
  const petId = await stockedPet(t, 5);
  await caughtUp(t);
  // The root field's arguments only choose the events: these three differ there and still share.
  const feeds = [watchSse(INVENTORY, { petIds: [petId] }), watchSse(INVENTORY), live.watch(live.client(t), INVENTORY, { petIds: [petId, '999999'] })];
  await subscribed(t, 3);
  const executed = executions();

  await setStock(t, petId, 3);
  await Promise.all(feeds.map((feed) => feed.until(1)));
  expect(executed).toHaveBeenCalledTimes(1);
  const event = { data: { inventoryChanged: { petId, quantity: 3, status: 'AVAILABLE' } } };
  for (const feed of feeds) expect(feed.events).toEqual([event]);
});

it('executes apart for callers whose results may differ: another role, or another selection', async () => {
  const petId = await stockedPet(t, 5);
  const { key } = await createApiKey(t, { plan: 'PRO' });
  await caughtUp(t);
  const anonymous = watchSse(INVENTORY, { petIds: [petId] });
  const keyed = watchSse(INVENTORY, { petIds: [petId] }, key);
  const admin = live.watch(live.client(t, t.adminKey), INVENTORY, { petIds: [petId] });
  const narrower = watchSse('subscription { inventoryChanged { quantity } }', undefined, key);
  await subscribed(t, 4);
  const executed = executions();

  await setStock(t, petId, 2);
  await Promise.all([anonymous, keyed, admin, narrower].map((feed) => feed.until(1)));
  expect(executed).toHaveBeenCalledTimes(4);
  const event = { data: { inventoryChanged: { petId, quantity: 2, status: 'AVAILABLE' } } };
  expect([anonymous.events, keyed.events, admin.events]).toEqual([[event], [event], [event]]);
  expect(narrower.events).toEqual([{ data: { inventoryChanged: { quantity: 2 } } }]);
});

it('checks a key held by many streams once per recheck, not once per stream', async () => {
  const { key } = await createApiKey(t, { plan: 'PRO' });
  for (let i = 0; i < 3; i++) watchSse(INVENTORY, undefined, key);
  await subscribed(t, 3);
  const lookups = jest.spyOn(ApiKeyService.prototype, 'authenticate');
  // A recheck asks about every key it holds at once: once one is asked about, the check has run.
  await eventually(() => lookups.mock.calls.length > 0, 5_000);
  expect(lookups.mock.calls).toEqual([[key]]);
});
