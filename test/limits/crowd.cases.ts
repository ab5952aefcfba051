import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { ApiKeyRole } from '../../src/auth/role';
import { Plan, shedAtLoopDelayOf } from '../../src/auth/plans';
import { Scope } from '../../src/common/scope';
import { CROWDING_REQUESTS } from '../../src/limits/admit';
import { LoopDelay } from '../../src/limits/loop-delay';
import { RateLimiter } from '../../src/limits/limiter';
import { MemoryLimiterStore } from '../../src/limits/memory.store';
import { UnpaidDatabaseTime } from '../../src/db/class-database-time';
import { createApiKey } from '../helpers/builders';
import { busyLoop } from '../helpers/busy-loop';
import { admittedNow, anonymous, keyOf, type Observed, testAdmitter, type Who } from './helpers/admitter';

// A busy event loop (docs/contract.md §5, "Shedding").

/** Asks nothing of the database: on the embedded one, a statement's own work would delay the loop. */
const NO_DATABASE = '{ __typename }';

/** One caller of each class, by name: anonymous, FREE, the paying plans and an admin key. */
function everyClass(): [string, Who][] {
  return [
    ['anonymous', anonymous('10.0.0.1')],
    ['FREE', keyOf(Plan.FREE)],
    ['PRO', keyOf(Plan.PRO)],
    ['BUSINESS', keyOf(Plan.BUSINESS)],
    ['admin', keyOf(Plan.FREE, ApiKeyRole.ADMIN)],
  ];
}

describe('a busy event loop', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Anonymous clients are shed from 100 ms late, FREE keys from 200, paying plans never.
    t = await startTestApp({ SHED_LOOP_DELAY_MS: '100' });
  });
  afterAll(() => t.close());

  it('sheds no visitor sending one request at a time, nor a paying key', async () => {
    const { key } = await createApiKey(t, { plan: 'PRO' });
    busyLoop(400);
    const [anonymous, pro] = await Promise.all([
      request(t.url).post('/graphql').send({ query: NO_DATABASE }),
      request(t.url).post('/graphql').set('X-API-Key', key).send({ query: NO_DATABASE }),
    ]);
    expect(anonymous.status).toBe(200);
    expect(pro.status).toBe(200);
  });

  it('sheds the requests of a low-priority client with many on the instance, 503 with Retry-After, anonymous first, paying plans never', async () => {
    const observed: Observed = { refusals: [] };
    let delayMs = 0;
    let now = 0;
    const admitter = testAdmitter(
      {
        limiter: new RateLimiter(new MemoryLimiterStore(), { threshold: 10, durationMs: 60_000 }, () => now),
        admissionOf: () => ({ max: 16, queue: 32, waitMs: 1_000 }),
        loopDelay: { ms: () => delayMs, shedAtOf: (caller) => shedAtLoopDelayOf(caller, 50) },
      },
      observed,
    );
    const callers = everyClass();
    // Each caller already has CROWDING_REQUESTS requests running.
    for (const [name, caller] of callers) {
      for (let i = 0; i < CROWDING_REQUESTS; i += 1) expect((await admitter.admit(caller, name, new Scope())).refusal).toBeUndefined();
    }
    const lateBy = (ms: number) => {
      delayMs = ms;
      // A second after the last look: a caller shed then was told to retry by now, and is not held.
      now += 1_000;
      return admittedNow(admitter, callers, { code: 'SERVICE_UNAVAILABLE', status: 503, retryAfterSeconds: 1, message: expect.stringMatching(/^This instance is busy: its work runs \d+ ms late/) });
    };
    expect(await lateBy(49)).toEqual(['anonymous', 'FREE', 'PRO', 'BUSINESS', 'admin']);
    expect(await lateBy(50)).toEqual(['FREE', 'PRO', 'BUSINESS', 'admin']);
    expect(await lateBy(100)).toEqual(['PRO', 'BUSINESS', 'admin']);
    expect(await lateBy(10_000)).toEqual(['PRO', 'BUSINESS', 'admin']);
    expect(observed.refusals).toEqual(['shed', 'shed', 'shed', 'shed', 'shed']);
    // One fewer running: not shed, however late the loop.
    expect((await admitter.admit(anonymous('10.0.0.2'), 'fresh', new Scope())).refusal).toBeUndefined();
  });

  it('reads the loop late while its next sample is overdue, before any timer of it has run', () => {
    const delay = new LoopDelay().start();
    try {
      expect(delay.ms).toBeLessThan(50);
      // One long turn, as a wave of requests read at once makes: no sample can run meanwhile.
      busyLoop(120);
      expect(delay.ms).toBeGreaterThanOrEqual(100);
    } finally {
      delay.stop();
    }
  });
});

describe('the unpaid classes’ database time spent', () => {
  it('sheds a crowding unpaid client at once, counting nothing, while its class’s time is spent; a visitor and a paying key go on', async () => {
    const classes = new UnpaidDatabaseTime(500, 0.5);
    const observed: Observed = { refusals: [] };
    const limiter = new RateLimiter(new MemoryLimiterStore(), { threshold: 10, durationMs: 60_000 });
    const admitter = testAdmitter({ limiter, admissionOf: () => ({ max: 16, queue: 32, waitMs: 1_000 }), unpaidRefusalOf: (caller) => classes.refusalWhileSpent(caller.kind === 'anonymous' ? 'anonymous' : 'paying') }, observed);
    const crowding = anonymous('10.0.0.1');
    for (let i = 0; i < CROWDING_REQUESTS; i += 1) expect((await admitter.admit(crowding, 'ip:10.0.0.1', new Scope())).refusal).toBeUndefined();
    const counted = async (identity: string) => (await limiter.peek(identity, { perMinute: 1_000_000, perDay: 1_000_000 })).windows[0].remaining;
    const before = await counted('ip:10.0.0.1');
    // Time left: admitted.
    expect((await admitter.admit(crowding, 'ip:10.0.0.1', new Scope())).refusal).toBeUndefined();
    for (const bucket of classes.bucketsOf('anonymous')) bucket.spend(2_000);
    const shed = await admitter.admit(crowding, 'ip:10.0.0.1', new Scope());
    expect(shed.refusal).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, message: expect.stringMatching(/^Anonymous clients together use at most 250 ms of database time a second/) });
    expect(shed.refusal!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await counted('ip:10.0.0.1')).toBe(before - 1);
    expect(observed.refusals).toEqual(['shed']);
    // A visitor with one request on the instance waits its turn as before, and so does a paying key.
    expect((await admitter.admit(anonymous('10.0.0.2'), 'ip:10.0.0.2', new Scope())).refusal).toBeUndefined();
    expect((await admitter.admit(keyOf(Plan.PRO), 'key:pro', new Scope())).refusal).toBeUndefined();
  });
});
