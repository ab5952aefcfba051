import type { Client } from 'graphql-ws';
import type { TestApp } from '../helpers/app';
import { setStock, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, caughtUp, eventually, liveClient, subscribe, subscribed } from '../helpers/live';

/** The gateway still serves HTTP and subscriptions after whatever a test threw at it. */
export async function stillServing(app: TestApp): Promise<void> {
  await eventually(async () => (await activeSubscriptions(app)) === 0);
  expect((await gql(app.url, '{ pets(first: 1) { totalCount } }')).status).toBe(200);
  const petId = await stockedPet(app, 1);
  await caughtUp(app);
  const client: Client = liveClient(app);
  try {
    const feed = subscribe(client, 'subscription($p: [ID!]) { inventoryChanged(petIds: $p) { quantity } }', { p: [petId] });
    await subscribed(app, 1);
    await setStock(app, petId, 3);
    await feed.until(1);
    expect(feed.events[0].data?.inventoryChanged.quantity).toBe(3);
  } finally {
    await client.dispose();
  }
}
