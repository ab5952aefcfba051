import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, setStock, stockedPet } from '../helpers/builders';
import { type Feed, activeSubscriptions, caughtUp, eventually, liveClient, liveSession, subscribed } from '../helpers/live';
import { printFigure } from '../helpers/figures';

/**
 * Two instances of one deployment: one database and, in services mode, one Redis (a shared
 * limiter prefix). Without Redis each instance counts its own slots, so the cross-instance cap
 * is checked on one instance there.
 */
let a: TestApp;
let b: TestApp;
const sharedSlots = !!process.env.REDIS_URL;
const live = liveSession();
const { clients, watch } = live;
beforeAll(async () => {
  const limiterKeyPrefix = `test:${randomBytes(6).toString('hex')}`;
  a = await startTestApp({ BAN_THRESHOLD: '1' }, { limiterKeyPrefix });
  b = await startTestApp({ BAN_THRESHOLD: '1', ADMIN_API_KEY: a.adminKey }, { db: a.db, limiterKeyPrefix });
});
afterEach(async () => {
  await live.closeAll();
  await eventually(async () => (await activeSubscriptions(a)) + (await activeSubscriptions(b)) === 0);
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const client = (t: TestApp, key?: string) => live.client(t, key);
const PETS = 'subscription { petChanged { id } }';
const errorCode = (feed: Feed) => feed.error?.[0]?.extensions?.code;

describe('two instances on one database', () => {
  it('deliver a change committed through one to a subscriber on the other, in commit order', async () => {
    const petId = await stockedPet(a, 0);
    await caughtUp(b);
    const feed = watch(client(b), 'subscription($p: [ID!]) { inventoryChanged(petIds: $p) { quantity } }', { p: [petId] });
    await subscribed(b, 1);
    const committedAt: number[] = [];
    const arrivedAt: number[] = [];
    const original = feed.events.push.bind(feed.events);
    feed.events.push = (...items) => {
      arrivedAt.push(performance.now());
      return original(...items);
    };
    for (let quantity = 1; quantity <= 20; quantity++) {
      await setStock(a, petId, quantity);
      committedAt.push(performance.now());
    }
    await feed.until(20);
    expect(feed.events.map((event) => event.data?.inventoryChanged.quantity)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const latencies = arrivedAt.map((at, i) => at - committedAt[i]).sort((x, y) => x - y);
    printFigure(
      `cross-instance: ${feed.events.length} of 20 events delivered on B; latency after A's response: ` +
        `p50 ${latencies[9].toFixed(1)} ms, max ${latencies[19].toFixed(1)} ms`,
    );
  });
});

describe(`the concurrent subscription cap${sharedSlots ? ', across both instances' : ''}`, () => {
  it('lets exactly 5 of 50 concurrent subscribes on a FREE key run; the rest get TOO_MANY_SUBSCRIPTIONS', async () => {
    const { key } = await createApiKey(a, { plan: 'FREE' });
    const apps = sharedSlots ? [a, b] : [a];
    const sockets = Array.from({ length: 10 }, (_, i) => client(apps[i % apps.length], key));
    const attempts = Array.from({ length: 50 }, (_, i) => watch(sockets[i % sockets.length], PETS));
    await eventually(() => attempts.filter((feed) => feed.error).length === 45);
    const active = (await activeSubscriptions(a)) + (await activeSubscriptions(b));
    printFigure(`50 concurrent subscribes on one FREE key over ${apps.length} instance(s): ${active} active, ${attempts.filter((f) => f.error).length} refused`);
    expect(active).toBe(5);
    expect(new Set(attempts.filter((feed) => feed.error).map(errorCode))).toEqual(new Set(['TOO_MANY_SUBSCRIPTIONS']));
    expect(attempts.find((feed) => feed.error)?.error[0].extensions.status).toBe(429);

    // Completing one frees exactly one slot, on either instance.
    attempts.find((feed) => !feed.error)?.stop();
    await eventually(async () => (await activeSubscriptions(a)) + (await activeSubscriptions(b)) === 4);
    const retries = Array.from({ length: 4 }, (_, i) => watch(sockets[(i + 1) % sockets.length], PETS));
    await eventually(() => retries.filter((feed) => feed.error).length === 3);
    expect((await activeSubscriptions(a)) + (await activeSubscriptions(b))).toBe(5);
  });

  it('counts TOO_MANY_SUBSCRIPTIONS refusals in no window', async () => {
    const { key } = await createApiKey(a, { plan: 'FREE' });
    const socket = client(a, key);
    const feeds = Array.from({ length: 15 }, () => watch(socket, PETS));
    await eventually(() => feeds.filter((feed) => feed.error).length === 10);
    const quota = await a.app.services.limiter.peek(`key:${(await a.app.services.apiKeys.authenticate(key))?.id}`, {
      perMinute: 60,
      perDay: 1_000,
    });
    expect(quota.windows.map((window) => window.limit - window.remaining)).toEqual([5, 5]);
  });
});

describe('the request windows', () => {
  it('count each subscribe once; a refused one gets RATE_LIMITED with retryAfter, then a ban closes the socket with 4403', async () => {
    const { key } = await createApiKey(a, { plan: 'ENTERPRISE', requestsPerMinute: 3, requestsPerDay: 100 });
    const socket = client(a, key);
    const accepted = [watch(socket, PETS), watch(socket, PETS), watch(socket, PETS)];
    await subscribed(a, 3);
    expect(accepted.every((feed) => !feed.error)).toBe(true);

    const limited = watch(socket, PETS);
    await limited.until(1);
    expect(limited.error[0]).toMatchObject({ extensions: { code: 'RATE_LIMITED', status: 429, retryAfter: expect.any(Number) } });
    expect(limited.error[0].extensions.retryAfter).toBeGreaterThan(0);
    expect(await activeSubscriptions(a)).toBe(3); // the socket stays open

    // BAN_THRESHOLD is 1: the second refusal starts a ban, and a banned key's socket goes.
    const closed = new Promise<number>((resolve) => socket.on('closed', (event) => resolve((event as { code: number }).code)));
    const banned = watch(socket, PETS);
    await banned.until(1);
    expect(errorCode(banned)).toBe('API_KEY_BANNED');
    expect(await closed).toBe(4403);

    // A banned key cannot even connect.
    const again = liveClient(a, key);
    clients.push(again);
    const refused = await new Promise<{ code: number; reason: string }>((resolve) => again.on('closed', (event) => resolve(event as any)));
    expect(refused).toMatchObject({ code: 4403, reason: 'API_KEY_BANNED' });
  });
});
