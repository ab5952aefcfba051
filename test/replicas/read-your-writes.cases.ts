import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { printFigure } from '../helpers/figures';
import { gql } from '../helpers/gql';
import { activeSubscriptions, liveClient, subscribe } from '../helpers/live';
import { freePort } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';
import { byStatus, SteadyLoad } from '../helpers/steady-load';
import { readsServed, replicaAt, type Replication, startReplication, withReplication } from '../helpers/replication';

withReplication('read replicas: every client reads its own writes, on any instance', () => {
  let r: Replication;
  let petId: string;
  let writer: string;
  let reader: string;

  const rename = (key: string, name: string, on = r.instances[0]) =>
    gql(on.url, 'mutation($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { name } }', { id: petId, name }, { key });
  const nameOf = async (key: string, on = r.instances[1], headers: Record<string, string> = {}) => {
    const result = await gql<{ pet: { name: string } }>(on.url, 'query($id: ID!) { pet(id: $id) { name } }', { id: petId }, { key, headers });
    expect(result.status).toBe(200);
    return result.data?.pet.name;
  };

  beforeAll(async () => {
    r = await startReplication();
    const [a] = r.instances;
    petId = await createPet(a, await createCategory(a, 'Dogs'), 'Rex');
    // Admins, since updatePet is theirs: one that writes, one that only reads.
    writer = (await createApiKey(a, { name: 'writer', role: 'ADMIN', plan: 'ENTERPRISE', requestsPerMinute: 100_000, requestsPerDay: 1_000_000 })).key;
    reader = (await createApiKey(a, { name: 'reader', role: 'ADMIN', plan: 'ENTERPRISE', requestsPerMinute: 100_000, requestsPerDay: 1_000_000 })).key;
    const settled = await rename(writer, 'Rex');
    await Promise.all(r.instances.map((instance) => replicaAt(instance, settled.headers['x-read-after'])));
  }, 120_000);

  afterAll(async () => {
    await r?.close();
  });

  it('reads a mutation back on the other instance every time, the replica 500 ms behind', async () => {
    const [a, b] = r.instances;
    const before = [await readsServed(a), await readsServed(b)];
    const rounds = 20;
    let readBack = 0;
    for (let round = 0; round < rounds; round += 1) {
      const written = await rename(writer, `Rex ${round}`, round % 2 === 0 ? a : b);
      expect(written.data?.updatePet.name).toBe(`Rex ${round}`);
      expect(written.headers['x-read-after']).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      // The other instance knows the writer's position from Redis, or from the header sent back.
      const headers: Record<string, string> = process.env.REDIS_URL ? {} : { 'X-Read-After': written.headers['x-read-after'] };
      const other = round % 2 === 0 ? b : a;
      // Every fourth read once the replica has replayed the write (served there), the others at once (the primary).
      if (round % 4 >= 2) await replicaAt(other, written.headers['x-read-after']);
      if ((await nameOf(writer, other, headers)) === `Rex ${round}`) readBack += 1;
    }
    const after = [await readsServed(a), await readsServed(b)];
    const served = (where: 'primary' | 'replica') => after[0][where] - before[0][where] + after[1][where] - before[1][where];
    printFigure('read-your-writes, 500 ms replica delay', { rounds, readBack, servedBy: { primary: served('primary'), replica: served('replica') } });
    expect(readBack).toBe(rounds);
    expect(served('replica')).toBe(rounds / 2);
    expect(served('primary')).toBe(rounds / 2);
  });

  it('sends a client without writes to the replica, where it may read the state before the last write', async () => {
    const [a, b] = r.instances;
    await replicaAt(b);
    await rename(writer, 'Rex the newest', a);
    const before = await readsServed(b);
    const seen = await nameOf(reader, b);
    const after = await readsServed(b);
    printFigure('a reader without writes', { seen, servedBy: after.replica > before.replica ? 'replica' : 'primary' });
    expect(after.replica - before.replica).toBe(1);
    expect(seen).toMatch(/^Rex/);
  });

  it('honours X-Read-After sent back by the client, and refuses one that is no position', async () => {
    const [a, b] = r.instances;
    const written = await rename(writer, 'Rex by header', a);
    expect(await nameOf(reader, b, { 'X-Read-After': written.headers['x-read-after'] })).toBe('Rex by header');
    const refused = await gql(b.url, '{ pets(first: 1) { totalCount } }', {}, { key: reader, headers: { 'X-Read-After': 'yesterday' } });
    expect(refused.status).toBe(400);
    expect(refused.errors?.[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('reads a write made on an instance cut from Redis on another instance, by the header or the cookie a browser sends back', async () => {
    const [a, b] = r.instances;
    const cut = await r.startInstance({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    // Callers of their own: no position of an earlier test's write sends their reads to the primary.
    const [byHeader, byCookie] = await Promise.all(
      ['by header', 'by cookie'].map(async (name) => (await createApiKey(a, { name, role: 'ADMIN', plan: 'ENTERPRISE', requestsPerMinute: 100_000, requestsPerDay: 1_000_000 })).key),
    );
    const headerWrite = await rename(byHeader, 'Rex while cut off, by header', cut);
    expect(headerWrite.headers['x-read-after']).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(await nameOf(byHeader, b, { 'X-Read-After': headerWrite.headers['x-read-after'] })).toBe('Rex while cut off, by header');
    const cookieWrite = await rename(byCookie, 'Rex while cut off, by cookie', cut);
    const cookies = ([] as string[]).concat(cookieWrite.headers['set-cookie'] ?? []);
    printFigure('a write on an instance cut from Redis', { 'x-read-after': cookieWrite.headers['x-read-after'], 'set-cookie': cookies });
    const cookie = cookies.find((each) => each.startsWith('petstore_read_after='));
    expect(cookie).toMatch(/^petstore_read_after=[0-9A-F]+\/[0-9A-F]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    // As a browser sends it back: the name=value pair, among others of the site's.
    expect(await nameOf(byCookie, b, { Cookie: `theme=dark; ${cookie!.split(';')[0]}` })).toBe('Rex while cut off, by cookie');
  });

  it("delivers a subscription event with data at least as new as the event's change", async () => {
    const [a, b] = r.instances;
    const client = liveClient(b, reader);
    try {
      const feed = subscribe<{ petChanged: { pet: { name: string } } }>(client, 'subscription($ids: [ID!]) { petChanged(ids: $ids) { pet { name } } }', { ids: [petId] });
      await waitFor(async () => (await activeSubscriptions(b)) === 1, 20_000, 'the subscription to start');
      // Each event read as it is delivered: never the state before its own change.
      for (let round = 0; round < 5; round += 1) {
        await rename(writer, `Rex live ${round}`, a);
        await feed.until(round + 1, 20_000);
      }
      const names = feed.events.map((event) => event.data?.petChanged.pet.name);
      printFigure('subscription events', names);
      expect(names).toEqual([0, 1, 2, 3, 4].map((round) => `Rex live ${round}`));
      feed.stop();
    } finally {
      await client.dispose();
    }
  });

  it('keeps answering while the replica is stopped and started under load: 0 errors, reads back on it once caught up', async () => {
    const { instances, replica } = r;
    const keys = await Promise.all([1, 2, 3].map(async (n) => (await createApiKey(instances[0], { name: `load ${n}`, plan: 'ENTERPRISE', requestsPerMinute: 100_000, requestsPerDay: 1_000_000 })).key));
    const readiness: number[] = [];
    const load = new SteadyLoad(
      instances.map(({ url }) => url),
      keys,
    );
    const started = Date.now();
    const timeline: Record<string, number> = {};
    const mark = (what: string) => (timeline[what] = Date.now() - started);
    const onReplica = async () => Promise.all(instances.map(async (instance) => (await readsServed(instance)).replica));
    /** True when every instance's /readyz (200 whatever the replica's state) shows the replica in `state`. */
    const replicaIs = async (state: string) => {
      const answers = await Promise.all(instances.map((instance) => fetch(`${instance.url}/readyz`)));
      readiness.push(...answers.map(({ status }) => status));
      const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as { replicas: { state: string }[] }[];
      return bodies.every(({ replicas }) => replicas[0].state === state);
    };
    try {
      const before = await onReplica();
      await waitFor(async () => (await onReplica()).every((count, at) => count > before[at]), 20_000, 'reads on the replica');
      mark('reads on the replica');
      await replica.stop('fast');
      mark('replica stopped');
      await waitFor(() => replicaIs('down'), 20_000, 'every instance to see the replica down');
      mark('replica down on every instance');
      const whileDown = await onReplica();
      const downAt = Date.now();
      await waitFor(() => load.since(downAt).length >= 20, 20_000, 'load while the replica is away');
      expect(await onReplica()).toEqual(whileDown);
      await replica.start();
      mark('replica started');
      await waitFor(() => replicaIs('ok'), 20_000, 'every instance to take the replica back');
      mark('replica takes reads on every instance');
      const back = await onReplica();
      await waitFor(async () => (await onReplica()).every((count, at) => count > back[at]), 20_000, 'reads on the replica again');
      mark('reads on the replica again');
    } finally {
      await load.stop();
    }
    const statuses = byStatus(load.answers);
    printFigure('replica stopped and started under load (ms since the load began)', timeline, 'answers by status', statuses, 'readyz', readiness.length, 'probes');
    expect(Object.keys(statuses)).toEqual(['200']);
    expect(new Set(readiness)).toEqual(new Set([200]));
  });
});
