import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, eventually, subscribed, wsUrl } from '../helpers/live';
import { acknowledgedSocket } from '../helpers/raw-socket';
import { stillServing } from './still-serving';

/**
 * A WebSocket client that stops reading while its 500 subscriptions' events pile up
 * (socket-protocol.cases.ts has the protocol's other refusals): megabytes resolved and queued
 * until the server gives up on it.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const acknowledged = (key?: string) => acknowledgedSocket(wsUrl(t), key);

describe('a client that stops reading', () => {
  it('has its socket closed with 1013 once over 1 MiB waits unsent, the drops counted', async () => {
    const category = await createCategory(t, 'Crowded');
    // Names as long as allowed (100 characters): each event's resolution then sends the most bytes.
    await t.db.dataSource.query(
      `INSERT INTO pets (name, category_id, status) SELECT rpad('A long name to fill the socket quickly', 96, ' and more') || ' ' || i, $1, 'available' FROM generate_series(1, 100) AS i`,
      [category],
    );
    const petId = await createPet(t, category, 'Moving');
    const socket = await acknowledged(t.adminKey);
    const query = `subscription { petChanged(ids: ["${petId}"]) { pet { category { pets(first: 100) { nodes { name } } } } } }`;
    for (let id = 0; id < 500; id++) socket.send({ id: String(id), type: 'subscribe', payload: { query } });
    await subscribed(t, 500);
    // The client reads no more: what the server sends piles up in the kernel, then in ws.
    socket.socket.pause();
    // One change at a time, each sent once the last one's 500 events were sent or dropped: changes
    // sent faster than a busy machine resolves their events would each cost 500 more resolutions.
    const petChangedEvents = async (metric: string) =>
      (await t.app.metrics.registry.getSingleMetric(metric)?.get())?.values.find(({ labels }) => labels.operation === 'petChanged')?.value ?? 0;
    const delivered = () => petChangedEvents('petstore_live_events_delivered_total');
    const dropped = async () => (await petChangedEvents('petstore_live_events_dropped_total')) > 0;
    const deliveredBefore = await delivered();
    for (let i = 0; i < 30 && !(await dropped()); i++) {
      await gql(t.url, `mutation { updatePet(id: "${petId}", input: { name: "Moving ${i}" }) { id } }`, undefined, { key: t.adminKey });
      await eventually(async () => (await delivered()) - deliveredBefore >= 500 * (i + 1) || (await dropped()), 10_000);
    }
    await eventually(dropped, 10_000);
    expect((await request(t.url).get('/metrics')).text).toMatch(/^petstore_live_events_dropped_total\{operation="petChanged"\} [1-9]/m);
    // Reading again, the client gets what was queued, then the close frame.
    socket.socket.resume();
    expect((await socket.closed).code).toBe(1013);
    await eventually(async () => (await activeSubscriptions(t)) === 0);
    await stillServing(t);
  }, 45_000);
});
