import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { FieldLimitStore } from '../../src/limits/field-limit.store';
import { createFieldLimiter, type FieldLimiter } from '../../src/limits/field-limiter';
import { withRedis } from '../helpers/services';

const PER_MINUTE = { max: 10, windowMs: 60_000 };
const redisUrl = process.env.REDIS_URL;
const prefix = `rlf-test-${randomBytes(4).toString('hex')}`;

let counter = 0;
const freshIdentity = () => `key:${process.pid}-${counter++}`;

async function concurrently(limiter: FieldLimiter, identity: string, n: number): Promise<(string | undefined)[]> {
  return Promise.all(Array.from({ length: n }, () => limiter.limit(identity, 'placeOrder', PER_MINUTE)));
}

const admitted = (answers: (string | undefined)[]) => answers.filter((answer) => answer === undefined).length;

describe('field limiter in memory', () => {
  afterEach(() => jest.restoreAllMocks());

  it('admits exactly max of 30 concurrent calls and names the limit in the refusal', async () => {
    const answers = await concurrently(createFieldLimiter(new FieldLimitStore()), freshIdentity(), 30);
    expect(admitted(answers)).toBe(10);
    expect(answers.filter(Boolean)).toEqual(
      Array<string>(20).fill('Too many placeOrder calls: at most 10 per minute; retry later'),
    );
  });

  it('limits each caller and each field apart', async () => {
    const limiter = createFieldLimiter(new FieldLimitStore());
    const identity = freshIdentity();
    await concurrently(limiter, identity, 10);
    expect(await limiter.limit(identity, 'placeOrder', PER_MINUTE)).toBeDefined();
    expect(await limiter.limit(identity, 'createApiKey', PER_MINUTE)).toBeUndefined();
    expect(await limiter.limit(freshIdentity(), 'placeOrder', PER_MINUTE)).toBeUndefined();
  });

  it('admits again once the window has passed, refused calls not counting', async () => {
    const now = jest.spyOn(Date, 'now');
    const limiter = createFieldLimiter(new FieldLimitStore());
    const identity = freshIdentity();
    const start = 1_700_000_000_000;
    now.mockReturnValue(start);
    expect(admitted(await concurrently(limiter, identity, 10))).toBe(10);
    now.mockReturnValue(start + 30_000);
    expect(admitted(await concurrently(limiter, identity, 5))).toBe(0);
    now.mockReturnValue(start + 59_999);
    expect(await limiter.limit(identity, 'placeOrder', PER_MINUTE)).toBeDefined();
    now.mockReturnValue(start + 60_000);
    expect(admitted(await concurrently(limiter, identity, 12))).toBe(10);
  });

  it('refuses a limit below 1, which the library would read as its default of 5', async () => {
    const limiter = createFieldLimiter(new FieldLimitStore());
    await expect(limiter.limit('key:1', 'placeOrder', { max: 0, windowMs: 60_000 })).rejects.toThrow(
      'expected a field limit of at least 1, got 0',
    );
  });
});

withRedis('field limiter over Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${prefix}:*` })) keys.push(...(batch as string[]));
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('admits exactly max of 30 concurrent calls', async () => {
    const store = new FieldLimitStore({ redis, prefix });
    const answers = await concurrently(createFieldLimiter(store), freshIdentity(), 30);
    expect(admitted(answers)).toBe(10);
  });

  it('keeps the timestamps under a hash-tagged key that expires with the window', async () => {
    const identity = freshIdentity();
    await createFieldLimiter(new FieldLimitStore({ redis, prefix })).limit(identity, 'placeOrder', PER_MINUTE);
    const key = `${prefix}:{${identity}}:placeOrder`;
    expect(JSON.parse((await redis.get(key)) as string)).toHaveLength(1);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('admits exactly max of 40 concurrent calls spread over two instances', async () => {
    const other = new Redis(redisUrl as string);
    try {
      const identity = freshIdentity();
      const instances = [createFieldLimiter(new FieldLimitStore({ redis, prefix })), createFieldLimiter(new FieldLimitStore({ redis: other, prefix }))];
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => instances[i % 2].limit(identity, 'placeOrder', PER_MINUTE)));
      expect(admitted(answers)).toBe(10);
      expect(await redis.exists(`${prefix}:{${identity}}:placeOrder:lock`)).toBe(0);
    } finally {
      await other.quit();
    }
  });

  it('waits out a lock left by a holder that died, then counts', async () => {
    const identity = freshIdentity();
    await redis.set(`${prefix}:{${identity}}:placeOrder:lock`, 'gone', 'PX', 300);
    const started = Date.now();
    expect(await createFieldLimiter(new FieldLimitStore({ redis, prefix })).limit(identity, 'placeOrder', PER_MINUTE)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(JSON.parse((await redis.get(`${prefix}:{${identity}}:placeOrder`)) as string)).toHaveLength(1);
  });

  it('shares the count between instances', async () => {
    const other = new Redis(redisUrl as string);
    try {
      const identity = freshIdentity();
      const first = createFieldLimiter(new FieldLimitStore({ redis, prefix }));
      const second = createFieldLimiter(new FieldLimitStore({ redis: other, prefix }));
      expect(admitted(await concurrently(first, identity, 10))).toBe(10);
      expect(await second.limit(identity, 'placeOrder', PER_MINUTE)).toBeDefined();
    } finally {
      await other.quit();
    }
  });

  it('counts every call once across a spell of Redis out of use, before, during and after it', async () => {
    let useRedis = true;
    const identity = freshIdentity();
    const limiter = createFieldLimiter(new FieldLimitStore({ redis, prefix, useRedis: () => useRedis }));
    expect(admitted(await concurrently(limiter, identity, 4))).toBe(4);
    // Redis slow or failing: this instance answers from memory, which has the 4 already.
    useRedis = false;
    expect(admitted(await concurrently(limiter, identity, 3))).toBe(3);
    // Back on Redis, which missed the 3: they still count.
    useRedis = true;
    expect(admitted(await concurrently(limiter, identity, 5))).toBe(3);
    expect(JSON.parse((await redis.get(`${prefix}:{${identity}}:placeOrder`)) as string)).toHaveLength(10);
  });
});
