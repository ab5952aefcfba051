import { type Client as SseClient, createClient } from 'graphql-sse';
import type { Client } from 'graphql-ws';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, caughtUp, eventually, liveSession, subscribe, subscribed } from '../helpers/live';

/** docs/contract.md §6, §9: an event whose resolution fails reaches every transport through the one formatter. */
let t: TestApp;
const live = liveSession();
let sse: SseClient | undefined;
beforeAll(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  sse?.dispose();
  await live.closeAll();
  await eventually(async () => (await activeSubscriptions(t)) === 0);
});
afterAll(() => t.close());

const PETS = 'subscription($ids: [ID!]) { petChanged(ids: $ids) { kind id pet { id name category { name } } } }';

describe('an event whose resolution fails', () => {
  it('is masked, with extensions { code, status }, over WebSocket and SSE alike', async () => {
    const petId = await createPet(t, await createCategory(t, 'Breaking'), 'Rex');
    await caughtUp(t);
    const overWs = live.watch(live.client(t), PETS, { ids: [petId] });
    sse = createClient({ url: `${t.url}/graphql/stream`, fetchFn: fetch, retryAttempts: 0 });
    const overSse = subscribe(sse as unknown as Client, PETS, { ids: [petId] });
    await subscribed(t, 2);
    // The event's read of its category now fails in the database, as a loader's would.
    await t.db.dataSource.query('ALTER TABLE categories RENAME COLUMN name TO name_gone');
    try {
      const updated = await gql(t.url, `mutation { updatePet(id: "${petId}", input: { name: "Rex II" }) { id } }`, undefined, { key: t.adminKey });
      expect(updated.errors).toBeUndefined();
      await overWs.until(1);
      await overSse.until(1);
    } finally {
      await t.db.dataSource.query('ALTER TABLE categories RENAME COLUMN name_gone TO name');
    }
    for (const feed of [overWs, overSse]) {
      const [event] = feed.events;
      expect(event.errors?.length).toBeGreaterThan(0);
      for (const error of event.errors ?? []) {
        expect(error).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR', status: 500 } });
        expect(Object.keys(error.extensions)).toEqual(['code', 'status']);
      }
      expect(JSON.stringify(event)).not.toMatch(/name_gone|does not exist/);
    }
  });
});
