import request from 'supertest';
import { ADMISSION_WAIT_MS, admissionOfCaller, INSTANCE_REQUESTS_IN_FLIGHT, PLAN_LIMITS, Plan, planQuota, shedAtOf } from '../../src/auth/plans';
import { ApiKeyRole } from '../../src/auth/role';
import { ClientGone, Scope } from '../../src/common/scope';
import { BoundedCounts } from '../../src/limits/bounded-counts';
import pino from 'pino';
import { Admitter } from '../../src/limits/admit';
import { admittedNow, anonymous, keyOf, type Observed, testAdmitter, type Who } from './helpers/admitter';
import { InFlight } from '../../src/limits/in-flight';
import { RateLimiter } from '../../src/limits/limiter';
import { MemoryLimiterStore } from '../../src/limits/memory.store';
import { startTestApp, type TestApp, DATABASE_BOUND } from '../helpers/app';
import { holdPets } from '../helpers/hold';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { metric } from '../helpers/metrics';
import { waitFor } from '../helpers/wait';

describe('BoundedCounts', () => {
  it('takes places up to the bound per key and frees them on leave', () => {
    const counts = new BoundedCounts();
    expect([1, 2, 3].map(() => counts.enter('ip:a', 2))).toEqual([true, true, false]);
    expect(counts.enter('ip:b', 2)).toBe(true);
    counts.leave('ip:a');
    expect(counts.of('ip:a')).toBe(1);
    expect(counts.enter('ip:a', 2)).toBe(true);
    counts.leave('ip:a');
    counts.leave('ip:a');
    expect(counts.of('ip:a')).toBe(0);
  });
});

describe('InFlight', () => {
  const admission = { max: 2, queue: 2, waitMs: 1_000 };
  afterEach(() => jest.useRealTimers());

  it('takes slots up to the bound per identity, then queues, then refuses at once', async () => {
    const inFlight = new InFlight();
    const [a, b, c, d, e, f] = Array.from({ length: 6 }, () => new Scope());
    expect(await inFlight.enter('ip:a', admission, a)).toBe(true);
    expect(await inFlight.enter('ip:a', admission, b)).toBe(true);
    const waiting = [inFlight.enter('ip:a', admission, c), inFlight.enter('ip:a', admission, d)];
    expect(inFlight.waitingOf('ip:a')).toBe(2);
    expect(await inFlight.enter('ip:a', admission, e)).toBe(false); // the queue is full
    expect(await inFlight.enter('ip:b', admission, f)).toBe(true); // another identity is not affected

    a.end();
    b.end();
    expect(await Promise.all(waiting)).toEqual([true, true]);
    expect(inFlight.of('ip:a')).toBe(2); // handed over, never freed in between
    c.end();
    d.end();
    f.end();
    expect(inFlight.totals()).toEqual({ running: 0, waiting: 0 });
  });

  it('hands a freed slot to the longest waiter first', async () => {
    const inFlight = new InFlight();
    const order: string[] = [];
    const [holder, first, second] = [new Scope(), new Scope(), new Scope()];
    await inFlight.enter('ip:a', { ...admission, max: 1 }, holder);
    const firstIn = inFlight.enter('ip:a', { ...admission, max: 1 }, first).then(() => order.push('first'));
    const secondIn = inFlight.enter('ip:a', { ...admission, max: 1 }, second).then(() => order.push('second'));
    holder.end();
    await firstIn;
    first.end();
    await secondIn;
    expect(order).toEqual(['first', 'second']);
  });

  it('refuses a waiter whose wait runs out, and frees its place in the queue', async () => {
    jest.useFakeTimers();
    const waits: string[] = [];
    const inFlight = new InFlight(() => waits.push('wait'));
    const holder = new Scope();
    await inFlight.enter('ip:a', { ...admission, max: 1 }, holder);
    const late = inFlight.enter('ip:a', { ...admission, max: 1 }, new Scope());
    jest.advanceTimersByTime(admission.waitMs - 1);
    expect(inFlight.waitingOf('ip:a')).toBe(1);
    jest.advanceTimersByTime(1);
    expect(await late).toBe(false);
    expect(inFlight.waitingOf('ip:a')).toBe(0);
    expect(waits).toEqual(['wait']);
    holder.end();
    expect(inFlight.of('ip:a')).toBe(0);
  });

  it('takes a waiter whose client goes out of the queue at once, and never hands it a slot', async () => {
    const inFlight = new InFlight();
    const holder = new Scope();
    const gone = new Scope();
    const next = new Scope();
    await inFlight.enter('ip:a', { ...admission, max: 1 }, holder);
    const abandoned = inFlight.enter('ip:a', { ...admission, max: 1 }, gone);
    const served = inFlight.enter('ip:a', { ...admission, max: 1 }, next);
    gone.abort();
    gone.end();
    expect(await abandoned).toBe(false);
    expect(inFlight.waitingOf('ip:a')).toBe(1);
    holder.end();
    expect(await served).toBe(true);
    next.end();
    expect(inFlight.totals()).toEqual({ running: 0, waiting: 0 });
  });

  it('gives a slot handed to a request that has already ended straight back', async () => {
    const inFlight = new InFlight();
    const holder = new Scope();
    const ended = new Scope();
    await inFlight.enter('ip:a', { ...admission, max: 1 }, holder);
    const late = inFlight.enter('ip:a', { ...admission, max: 1 }, ended);
    ended.end(); // ended without an abort: the slot it is handed goes back as it is taken
    holder.end();
    expect(await late).toBe(true);
    expect(inFlight.of('ip:a')).toBe(0);
    expect(await inFlight.enter('ip:a', { ...admission, max: 1 }, new Scope())).toBe(true);
  });

  it('gives the slot back when the limiter fails after the slot was taken', async () => {
    // A store that cannot answer (Redis gone mid-call, with no fallback): the slot is the scope's all the same.
    const store = new MemoryLimiterStore();
    store.hit = () => Promise.reject(new Error('the store did not answer'));
    const admitter = new Admitter({
      limiter: new RateLimiter(store, { threshold: 10, durationMs: 60_000 }),
      metrics: { observeRefusal: () => undefined, observeAdmissionWait: () => undefined },
      logger: pino({ level: 'silent' }),
      quotaOf: () => ({ perMinute: 60, perDay: 1_000 }),
      admissionOf: () => ({ max: 1, queue: 1, waitMs: 1_000 }),
    });
    const scope = new Scope();
    await expect(admitter.admit({ kind: 'anonymous', address: '10.0.0.1' }, 'ip:10.0.0.1', scope)).rejects.toThrow('the store did not answer');
    expect(admitter.inFlightTotals()).toEqual({ running: 1, waiting: 0 });
    scope.end(); // the response closes, however it ends
    expect(admitter.inFlightTotals()).toEqual({ running: 0, waiting: 0 });
  });

  it('sheds by priority when the instance holds many requests in flight: anonymous first, then FREE, then paying plans, admin and ENTERPRISE never; a subscribe as a request', async () => {
    const observed: Observed = { refusals: [] };
    let now = 0;
    const limiter = new RateLimiter(new MemoryLimiterStore(), { threshold: 10, durationMs: 60_000 }, () => now);
    const admitter = testAdmitter({ limiter, admissionOf: () => ({ max: INSTANCE_REQUESTS_IN_FLIGHT, queue: 0, waitMs: 1_000 }), shedAtOf }, observed);
    const callers: [string, Who][] = [
      ['anonymous', anonymous('10.0.0.1')],
      ['FREE', keyOf(Plan.FREE)],
      ['PRO', keyOf(Plan.PRO)],
      ['BUSINESS', keyOf(Plan.BUSINESS)],
      ['ENTERPRISE', keyOf(Plan.ENTERPRISE)],
      ['admin', keyOf(Plan.FREE, ApiKeyRole.ADMIN)],
    ];
    // The instance fills with one admin key's requests; at each level, who is still let in.
    const held: Scope[] = [];
    const admittedAt = async (inFlight: number) => {
      // Each level a second after the last: a caller shed there was told to retry by now, and is not held.
      now += 1_000;
      while (held.length < inFlight) {
        const scope = new Scope();
        expect((await admitter.admit(keyOf(Plan.ENTERPRISE, ApiKeyRole.ADMIN), 'key:filler', scope)).refusal).toBeUndefined();
        held.push(scope);
      }
      const shed = { code: 'SERVICE_UNAVAILABLE', status: 503, retryAfterSeconds: 1 };
      const requests = await admittedNow(admitter, callers, shed);
      expect(await admittedNow(admitter, callers, shed, 'subscribe')).toEqual(requests);
      return requests;
    };
    expect(await admittedAt(INSTANCE_REQUESTS_IN_FLIGHT / 2 - 1)).toEqual(['anonymous', 'FREE', 'PRO', 'BUSINESS', 'ENTERPRISE', 'admin']);
    expect(await admittedAt(INSTANCE_REQUESTS_IN_FLIGHT / 2)).toEqual(['FREE', 'PRO', 'BUSINESS', 'ENTERPRISE', 'admin']);
    expect(await admittedAt((INSTANCE_REQUESTS_IN_FLIGHT * 3) / 4)).toEqual(['PRO', 'BUSINESS', 'ENTERPRISE', 'admin']);
    expect(await admittedAt((INSTANCE_REQUESTS_IN_FLIGHT * 9) / 10)).toEqual(['ENTERPRISE', 'admin']);
    expect(observed.refusals).toEqual(Array(2 * (1 + 2 + 4)).fill('shed'));
    for (const scope of held) scope.end();
    expect(admitter.inFlightTotals()).toEqual({ running: 0, waiting: 0 });
  });

  /** An admitter on a hand-moved clock that sheds every anonymous request it is asked. */
  const sheddingEveryRequest = (clock: () => number) =>
    testAdmitter({
      limiter: new RateLimiter(new MemoryLimiterStore(), { threshold: 10, durationMs: 60_000 }, clock),
      admissionOf: () => ({ max: 16, queue: 32, waitMs: 1_000 }),
      shedAtOf: () => 0,
    });
  const SHED = { code: 'SERVICE_UNAVAILABLE', status: 503, retryAfterSeconds: 1 };

  it('answers a shed client that sends again within its Retry-After second when that second ends, the first shed of each second at once', async () => {
    let now = 1_000;
    const admitter = sheddingEveryRequest(() => now);
    const caller = anonymous('10.0.0.9');
    const shed = SHED;
    const answered = (scope: Scope, sentAt: number) => admitter.admit(caller, 'ip:10.0.0.9', scope, sentAt);

    // Told at 1,000: answered at once.
    expect((await answered(new Scope(), now)).refusal).toMatchObject(shed);
    // Sent again at 1,400, having been told: held; its client going ends the wait at once.
    const going = new Scope();
    let settled = false;
    const held = answered(going, 1_400).then((admitted) => ((settled = true), admitted));
    await new Promise(setImmediate);
    expect(settled).toBe(false);
    going.abort();
    expect((await held).refusal).toMatchObject(shed);
    // Sent before it was told (a burst already on its way): answered at once.
    expect((await answered(new Scope(), 900)).refusal).toMatchObject(shed);
    // Sent at 1,999: answered when the second ends, a millisecond later.
    now = 1_999;
    expect((await answered(new Scope(), 1_999)).refusal).toMatchObject(shed);
    // The next second's first shed: told again, at once.
    now = 2_000;
    expect((await answered(new Scope(), 2_000)).refusal).toMatchObject(shed);
  });

  it('answers a shed request at most once a second on its connection, even as the first shed of its identity’s next second', async () => {
    let now = 1_000;
    const admitter = sheddingEveryRequest(() => now);
    const caller = anonymous('10.0.0.9');
    const shed = SHED;
    const [connection, other] = [{}, {}];
    const answered = (scope: Scope, sentAt: number, on: object) => admitter.admit(caller, 'ip:10.0.0.9', scope, sentAt, on);
    const settlesNow = async (scope: Scope, sentAt: number, on: object) => {
      let settled = false;
      const answer = answered(scope, sentAt, on).then((admitted) => ((settled = true), admitted));
      await new Promise(setImmediate);
      const atOnce = settled;
      scope.abort();
      expect((await answer).refusal).toMatchObject(shed);
      return atOnce;
    };

    // Answered on `connection` at 1,000, the identity's first shed; held at 1,999, its client leaving then.
    expect((await answered(new Scope(), 1_000, connection)).refusal).toMatchObject(shed);
    now = 1_999;
    expect(await settlesNow(new Scope(), 1_999, connection)).toBe(false);
    // At 2,000 the identity's second is over, but `connection` was answered at 1,999: held.
    now = 2_000;
    expect(await settlesNow(new Scope(), 2_000, connection)).toBe(false);
    // Another connection's request, sent before the identity was told again, is answered at once.
    expect(await settlesNow(new Scope(), 1_999, other)).toBe(true);
  });

  it('gives FREE and anonymous callers at least 16 at once, higher plans more, each a queue that holds the rest of a minute’s quota', () => {
    expect(admissionOfCaller({ kind: 'anonymous', address: '203.0.113.7' })).toEqual({ max: 16, queue: 60 - 16, waitMs: ADMISSION_WAIT_MS });
    const keyOn = (plan: Plan, perMinute: number) => ({ kind: 'key' as const, key: { id: plan, plan, quota: { perMinute, perDay: 100 * perMinute } } });
    const callers = ([Plan.FREE, Plan.PRO, Plan.BUSINESS] as const).map((plan) => keyOn(plan, planQuota(plan).perMinute));
    callers.push(keyOn(Plan.ENTERPRISE, 100_000));
    const admissions = callers.map((caller) => admissionOfCaller(caller));
    const bounds = admissions.map((admission) => admission.max);
    expect(bounds).toEqual([...bounds].sort((a, b) => a - b));
    expect(new Set(bounds).size).toBe(callers.length);
    // A burst of a whole minute's quota fits: every request of it runs or waits.
    admissions.forEach(({ max, queue }, i) => expect(max + queue).toBe(callers[i].key.quota.perMinute));
    // An ENTERPRISE key agreed a small quota still queues twice its bound.
    expect(admissionOfCaller(keyOn(Plan.ENTERPRISE, 50)).queue).toBe(2 * PLAN_LIMITS[Plan.ENTERPRISE].requestsInFlight);
  });
});

describe('requests in flight per identity, through HTTP', () => {
  const max = PLAN_LIMITS[Plan.FREE].requestsInFlight;
  let t: TestApp;
  let petId: string;
  beforeAll(async () => {
    t = await startTestApp({ BAN_THRESHOLD: '2', BAN_SECONDS: '60', ...DATABASE_BOUND });
    petId = await createPet(t, await createCategory(t), 'Rex');
  });
  afterAll(() => t.close());

  const query = () => ({ query: `{ pet(id: "${petId}") { name } }` });

  const waitsSoFar = () => metric(t, 'petstore_admission_waits_total');
  const untilWaits = async (count: number) => waitFor(async () => (await waitsSoFar()) >= count, 10_000, `${count} requests waiting for a slot`);

  it(`lets requests past ${max} in flight wait for a slot, and answers every one`, async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const send = () => request(t.url).post('/graphql').set('X-API-Key', key).send(query());
    expect((await send()).status).toBe(200); // the key's lookup is cached before the database is held
    const before = await waitsSoFar();
    const hold = await holdPets(t);
    const sent = Array.from({ length: max + 8 }, () => send().then((r) => r));
    await untilWaits(before + 8);
    await hold.release();
    const answers = await Promise.all(sent);

    expect(answers.map((answer) => answer.status)).toEqual(Array(max + 8).fill(200));
    // Every one of them counted once, and only once it ran: 1 + 24 of the minute's 60.
    expect(Math.min(...answers.map((answer) => Number(answer.headers['x-ratelimit-remaining'])))).toBe(60 - 1 - (max + 8));
  });

  it('refuses a request with the queue full at once: 429, Retry-After 1, one message, counting nothing and never toward a ban', async () => {
    // Anonymous, so that no key is looked up in the database while it is held.
    const { queue } = admissionOfCaller({ kind: 'anonymous', address: '127.0.0.1' });
    const perMinute = planQuota(Plan.FREE).perMinute;
    const send = () => request(t.url).post('/graphql').send(query());
    const before = await waitsSoFar();
    const hold = await holdPets(t);
    // The bound and its queue hold a whole minute's quota.
    const sent = Array.from({ length: max + queue }, () => send().then((r) => r));
    await untilWaits(before + queue);
    // BAN_THRESHOLD 2: four refusals would start a ban if they counted toward one.
    const refusals = [];
    for (let i = 0; i < 4; i += 1) refusals.push(await send());
    await hold.release();
    const answers = await Promise.all(sent);

    // None of the four took a request of the window: every one of the quota's was answered.
    expect(max + queue).toBe(perMinute);
    expect(answers.map((answer) => answer.status)).toEqual(Array(perMinute).fill(200));
    expect(Math.min(...answers.map((answer) => Number(answer.headers['x-ratelimit-remaining'])))).toBe(0);
    expect(refusals.map((r) => r.status)).toEqual([429, 429, 429, 429]);
    const [refused] = refusals;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.errors).toEqual([
      {
        message: `Too many requests in flight: at most ${max} at once, and none finished in time; retry in 1 s`,
        extensions: { code: 'RATE_LIMITED', status: 429 },
      },
    ]);
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy']) {
      expect(refused.headers[header]).toBeDefined();
    }
    // The window's own refusal now, not the ban the four would have started.
    const after = await send();
    expect(after.status).toBe(429);
    expect(after.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(after.headers['retry-after'])).toBeGreaterThan(1);
    expect((await request(t.url).get('/metrics')).text).toMatch(/petstore_rate_limit_refusals_total\{reason="in-flight"\} 4/);
  });

  it('counts toward no ban the refusals of requests that reached it before the first was decided, and those sent after', async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const send = () => request(t.url).post('/graphql').set('X-API-Key', key).send(query());
    // 34 of the minute's 60 spent, at once: the key's look-up stays cached while the database is held.
    expect(await Promise.all(Array.from({ length: 34 }, () => send().then((r) => r.status)))).toEqual(Array(34).fill(200));
    const before = await waitsSoFar();
    const hold = await holdPets(t);
    // 60 at once: 16 admitted and held by the database, 44 waiting for a slot; none refused before all have come.
    const sent = Array.from({ length: 60 }, () => send().then((r) => r));
    try {
      await untilWaits(before + 44);
    } finally {
      await hold.release();
    }
    const answers = await Promise.all(sent);

    // BAN_THRESHOLD 2: the window refuses 34 of them, and only its first refusal counts.
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(26).fill(200), ...Array(34).fill(429)]);
    expect(answers.filter((answer) => answer.status === 429).every((answer) => Number(answer.headers['retry-after']) > 1)).toBe(true);
    // Sent once it was told: refusal 2 is answered 429, refusal 3 starts the ban.
    expect((await send()).status).toBe(429);
    const banned = await send();
    expect(banned.status).toBe(403);
    expect(banned.body.errors[0].extensions.code).toBe('API_KEY_BANNED');
  });

  it('frees the slot of a request that ends, however it ends', async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const send = (body: object) => request(t.url).post('/graphql').set('X-API-Key', key).send(body);
    for (let i = 0; i < 10; i += 1) expect((await send({ query: '{ nope }' })).status).toBe(400);
    const answers = await Promise.all(Array.from({ length: max }, () => send(query())));
    expect(answers.map((answer) => answer.status)).toEqual(Array(max).fill(200));
  });
});

describe('Scope', () => {
  it('tells its listeners and its signal, made before or after, once when the client goes; a listener taken back hears nothing', () => {
    const scope = new Scope();
    const heard: string[] = [];
    scope.onAbort(() => heard.push('first'));
    const stop = scope.onAbort(() => heard.push('taken back'));
    const early = scope.signal;
    stop();
    expect(scope.aborted).toBe(false);
    scope.abort();
    scope.abort();
    expect(heard).toEqual(['first']);
    expect(early.aborted).toBe(true);
    expect(early.reason).toBe(scope.reason);
    expect(scope.reason).toBeInstanceOf(ClientGone);
    // A signal asked for after the abort is born aborted, with the same reason.
    const late = new Scope();
    late.abort();
    expect(late.signal.aborted).toBe(true);
    expect(late.signal.reason).toBe(late.reason);
  });
});
