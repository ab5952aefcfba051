import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { MemorySubscriptionSlots, RedisSubscriptionSlots, type SubscriptionSlots } from '../../src/live/subscription-slots';
import { eachStore, withRedis } from '../helpers/services';
import { waitFor } from '../helpers/wait';

const logger = pino({ level: 'silent' });
const redisUrl = process.env.REDIS_URL;
const clients: Redis[] = [];
afterAll(() => clients.forEach((client) => client.disconnect()));

/** A Redis store under a prefix of its own: one instance of a deployment. */
function redisSlots(prefix: string, leaseMs?: number): RedisSubscriptionSlots {
  const client = new Redis(redisUrl as string);
  clients.push(client);
  return new RedisSubscriptionSlots(client, prefix, logger, leaseMs);
}

const stores = eachStore<() => SubscriptionSlots>([
  ['memory', () => new MemorySubscriptionSlots()],
  ['redis', () => redisSlots(`test:${randomBytes(6).toString('hex')}:`)],
]);

for (const [name, make, suite] of stores) suite(`subscription slots (${name})`, () => {
  let slots: SubscriptionSlots;
  beforeEach(() => {
    slots = make();
  });
  afterEach(() => slots.close());

  it('grants exactly the limit of 50 concurrent attempts, and a released slot once', async () => {
    const granted = await Promise.all(Array.from({ length: 50 }, (_, i) => slots.acquire('key:1', `s${i}`, 5)));
    expect(granted.filter(Boolean)).toHaveLength(5);
    expect(await slots.active('key:1')).toBe(5);
    await slots.release('key:1', `s${granted.indexOf(true)}`);
    const again = await Promise.all(Array.from({ length: 10 }, (_, i) => slots.acquire('key:1', `t${i}`, 5)));
    expect(again.filter(Boolean)).toHaveLength(1);
  });

  it('keeps identities apart, and re-acquiring a held slot takes no second one', async () => {
    expect(await slots.acquire('key:1', 'a', 1)).toBe(true);
    expect(await slots.acquire('key:1', 'a', 1)).toBe(true);
    expect(await slots.acquire('key:1', 'b', 1)).toBe(false);
    expect(await slots.acquire('ip:10.0.0.1', 'b', 1)).toBe(true);
    expect(await slots.active('key:1')).toBe(1);
  });
});

withRedis('subscription slots shared in Redis by two instances', () => {
  it('are exact across instances, kept while their instance renews them, and freed within the lease when it dies', async () => {
    const prefix = `test:${randomBytes(6).toString('hex')}:`;
    const leaseMs = 1_000;
    const doomed = redisSlots(prefix, leaseMs);
    const survivor = redisSlots(prefix, leaseMs);
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? doomed : survivor).acquire('key:7', `s${i}`, 5)),
    );
    expect(attempts.filter(Boolean)).toHaveLength(5);

    // Renewed every third of the lease: still held two leases later (a wait that only ever runs long).
    await new Promise((resolve) => setTimeout(resolve, 2 * leaseMs));
    expect(await survivor.active('key:7')).toBe(5);
    expect(await survivor.acquire('key:7', 'late', 5)).toBe(false);

    // The instance dies: it stops renewing and never releases.
    doomed.close();
    const held = attempts.filter((granted, i) => granted && i % 2).length;
    await waitFor(async () => (await survivor.active('key:7')) === 5 - held, 10 * leaseMs, "the dead instance's slots to lapse");
    survivor.close();
  });
});
