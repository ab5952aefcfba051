import pino from 'pino';
import { createLimiterStore } from '../../src/limits/create-store';
import { RateLimiter } from '../../src/limits/limiter';
import { captureLog } from '../helpers/log-capture';
import { freePort } from '../helpers/redis-server';

const QUOTA = { perMinute: 2, perDay: 100 };
const BAN = { threshold: 10, durationMs: 900_000 };

describe('createLimiterStore', () => {
  it('keeps everything in memory without a Redis URL', async () => {
    const stores = await createLimiterStore({ logger: pino({ level: 'silent' }) });
    expect(stores.backend).toBe('memory');
    expect(stores.store.status()).toBe('ok');
    const limiter = new RateLimiter(stores.store, BAN);
    const kinds = [];
    for (let i = 0; i < 3; i++) kinds.push((await limiter.check('ip:127.0.0.1', QUOTA)).kind);
    expect(kinds).toEqual(['allowed', 'allowed', 'limited']);
    await stores.close();
  });

  it('starts degraded, limiting from memory, when Redis does not answer at start-up', async () => {
    // A port nobody listens on.
    const log = captureLog();
    const port = await freePort();
    const stores = await createLimiterStore({
      redis: { kind: 'single', url: `redis://127.0.0.1:${port}` },
      logger: log.logger,
      readyWithinMs: 300,
    });
    try {
      // It answered at all: start-up does not wait on a Redis that never comes.
      expect(stores.backend).toBe('redis');
      expect(stores.store.status()).toBe('degraded');
      expect(log.messages('warn')).toEqual([`Redis at 127.0.0.1:${port} (REDIS_URL) is unreachable: rate limits and bans are now per instance, from memory`]);
      const limiter = new RateLimiter(stores.store, BAN);
      const kinds = [];
      for (let i = 0; i < 3; i++) kinds.push((await limiter.check('ip:127.0.0.1', QUOTA)).kind);
      expect(kinds).toEqual(['allowed', 'allowed', 'limited']);
    } finally {
      await stores.close();
    }
  });
});
