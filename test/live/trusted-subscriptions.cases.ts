import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, NetworkError } from 'graphql-sse';
import type { Client } from 'graphql-ws';
import { startTestApp, type TestApp } from '../helpers/app';
import { caughtUp, activeSubscriptions, eventually, type Feed, liveClient, subscribe, subscribed } from '../helpers/live';
import { setStock, stockedPet } from '../helpers/builders';

/** TRUSTED_DOCUMENTS_ONLY over subscriptions (docs/contract.md §8, §9): the policy of HTTP requests, on every transport. */
const TRUSTED = 'subscription TrustedInventory($petIds: [ID!]) { inventoryChanged(petIds: $petIds) { petId quantity } }';
const UNTRUSTED = 'subscription { inventoryChanged { petId quantity status } }';

let dir: string;
let t: TestApp;
const clients: { dispose(): void }[] = [];
const feeds: Feed[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-trusted-live-'));
  const file = join(dir, 'persisted-documents.json');
  writeFileSync(file, JSON.stringify({ [`sha256:${createHash('sha256').update(TRUSTED).digest('hex')}`]: TRUSTED }));
  t = await startTestApp({ TRUSTED_DOCUMENTS: file, TRUSTED_DOCUMENTS_ONLY: 'all' });
});
afterEach(async () => {
  feeds.splice(0).forEach((feed) => feed.stop());
  clients.splice(0).forEach((client) => client.dispose());
  await eventually(async () => (await activeSubscriptions(t)) === 0);
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function watch(client: Client, query: string, variables?: Record<string, unknown>): Feed {
  clients.push(client);
  const feed = subscribe(client, query, variables);
  feeds.push(feed);
  return feed;
}

const sseClient = () => createClient({ url: `${t.url}/graphql/stream`, fetchFn: fetch, retryAttempts: 0 }) as unknown as Client;

describe('over a WebSocket (graphql-ws client)', () => {
  it('refuses a document outside the manifest with an error message PERSISTED_DOCUMENT_REQUIRED', async () => {
    const feed = watch(liveClient(t), UNTRUSTED);
    await feed.until(1);
    expect(feed.events).toEqual([]);
    expect(feed.error).toEqual([expect.objectContaining({ extensions: { code: 'PERSISTED_DOCUMENT_REQUIRED', status: 403 } })]);
  });

  it("delivers the manifest's document", async () => {
    const petId = await stockedPet(t, 5);
    // The stock change that made the pet must not reach the subscription: the hub has it first.
    await caughtUp(t);
    const feed = watch(liveClient(t), TRUSTED, { petIds: [petId] });
    await subscribed(t, 1);
    await setStock(t, petId, 4);
    await feed.until(1);
    expect(feed.events).toEqual([{ data: { inventoryChanged: { petId, quantity: 4 } } }]);
  });
});

describe('over Server-Sent Events', () => {
  it('refuses a document outside the manifest with 403 before the stream opens (graphql-sse client)', async () => {
    const feed = watch(sseClient(), UNTRUSTED);
    await feed.until(1);
    expect(feed.error).toBeInstanceOf(NetworkError);
    const response = (feed.error as NetworkError<Response>).response as Response;
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).not.toMatch(/event-stream/);
    expect(((await response.json()) as { errors: { extensions: unknown }[] }).errors[0].extensions).toEqual({ code: 'PERSISTED_DOCUMENT_REQUIRED', status: 403 });
  });

  it('refuses it over GET too', async () => {
    const response = await fetch(`${t.url}/graphql/stream?query=${encodeURIComponent(UNTRUSTED)}`, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { errors: { extensions: unknown }[] }).errors[0].extensions).toEqual({ code: 'PERSISTED_DOCUMENT_REQUIRED', status: 403 });
  });

  it("delivers the manifest's document", async () => {
    const petId = await stockedPet(t, 5);
    // The stock change that made the pet must not reach the subscription: the hub has it first.
    await caughtUp(t);
    const feed = watch(sseClient(), TRUSTED, { petIds: [petId] });
    await subscribed(t, 1);
    await setStock(t, petId, 3);
    await feed.until(1);
    expect(feed.events).toEqual([{ data: { inventoryChanged: { petId, quantity: 3 } } }]);
  });
});
