import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { RedisLimiterStore } from '../../src/limits/redis.store';
import { DAY_MS, MINUTE_MS, type WindowSpec } from '../../src/limits/window';
import { withRedis } from '../helpers/services';

const windows: WindowSpec[] = [
  { name: 'minute', limit: 10, lengthMs: MINUTE_MS },
  { name: 'day', limit: 100, lengthMs: DAY_MS },
];
const NO_BANS = { threshold: 1_000, durationMs: 900_000 };

/** The socket's writes as Node's stream hands them down: one `_write` per chunk, or one `_writev` of many. */
function watchWrites(socket: Socket): { writes: number; batches: number[] } {
  const seen = { writes: 0, batches: [] as number[] };
  const stream = socket as unknown as { _write: (...a: unknown[]) => void; _writev: (chunks: unknown[], cb: unknown) => void };
  const write = stream._write.bind(socket);
  const writev = stream._writev.bind(socket);
  stream._write = (...args) => {
    seen.writes += 1;
    write(...args);
  };
  stream._writev = (chunks, cb) => {
    seen.batches.push(chunks.length);
    writev(chunks, cb);
  };
  return seen;
}

withRedis('the limiter store gathers the writes of one turn', () => {
  const prefix = `rl-gather-${randomBytes(4).toString('hex')}`;
  let redis: Redis;

  beforeEach(async () => {
    redis = new Redis(process.env.REDIS_URL as string);
    await redis.ping();
  });

  afterEach(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('sends the hits made in one turn as one write, and answers each for its own identity', async () => {
    const store = new RedisLimiterStore(redis, prefix);
    const seen = watchWrites((redis as unknown as { stream: Socket }).stream);
    const now = Date.now();

    const outcomes = await Promise.all([0, 1, 2, 3, 4].map((i) => store.hit(`key:${i}`, windows, now, NO_BANS)));

    expect(seen).toEqual({ writes: 0, batches: [5] });
    expect(outcomes.map((outcome) => [outcome.kind, outcome.windows.map((w) => w.remaining)])).toEqual(Array(5).fill(['allowed', [9, 99]]));
  });

  it('writes each turn its own: a hit waits for no later one', async () => {
    const store = new RedisLimiterStore(redis, prefix);
    const seen = watchWrites((redis as unknown as { stream: Socket }).stream);
    const now = Date.now();

    for (let i = 0; i < 3; i++) await store.hit('key:turns', windows, now, NO_BANS);

    expect(seen.writes + seen.batches.length).toBe(3);
    const outcome = await store.peek('key:turns', windows, now);
    expect(outcome.map((w) => w.remaining)).toEqual([7, 97]);
  });
});
