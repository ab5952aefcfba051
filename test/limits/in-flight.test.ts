import request from 'supertest';
import type { QueryRunner } from 'typeorm';
import { InFlight } from '../../src/limits/in-flight';
import { PLAN_CONCURRENCY, Plan } from '../../src/auth/plans';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';

describe('InFlight', () => {
  it('takes slots up to the bound per identity and frees them on leave', () => {
    const inFlight = new InFlight();
    expect([1, 2, 3].map(() => inFlight.enter('ip:a', 2))).toEqual([true, true, false]);
    expect(inFlight.enter('ip:b', 2)).toBe(true);
    inFlight.leave('ip:a');
    expect(inFlight.of('ip:a')).toBe(1);
    expect(inFlight.enter('ip:a', 2)).toBe(true);
    inFlight.leave('ip:a');
    inFlight.leave('ip:a');
    expect(inFlight.of('ip:a')).toBe(0);
  });
});

describe('requests in flight per identity, through HTTP', () => {
  let t: TestApp;
  let petId: string;
  beforeAll(async () => {
    t = await startTestApp({ BAN_THRESHOLD: '2', BAN_SECONDS: '60' });
    petId = await createPet(t, await createCategory(t), 'Rex');
  });
  afterAll(() => t.close());

  const query = () => ({ query: `{ pet(id: "${petId}") { name } }` });

  /**
   * Holds every read of `pets` behind a lock taken by the test itself: the requests sent meanwhile
   * stay in flight until `release` (in embedded mode they wait for the pool's one connection).
   */
  async function holdPets(): Promise<{ release: () => Promise<void> }> {
    const runner: QueryRunner = t.db.dataSource.createQueryRunner();
    await runner.startTransaction();
    await runner.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
    return {
      release: async () => {
        await runner.commitTransaction();
        await runner.release();
      },
    };
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

  it(`refuses an anonymous client’s request past ${PLAN_CONCURRENCY[Plan.FREE]} in flight with 429, Retry-After 1 and the rate-limit headers`, async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const hold = await holdPets();
    const held = Array.from({ length: PLAN_CONCURRENCY[Plan.FREE] }, () => request(t.url).post('/graphql').send(query()).then((r) => r));
    await settle();
    const refused = await request(t.url).post('/graphql').send(query());
    await hold.release();
    const answers = await Promise.all(held);

    expect(answers.map((answer) => answer.status)).toEqual(Array(PLAN_CONCURRENCY[Plan.FREE]).fill(200));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.errors[0].extensions).toEqual({ code: 'RATE_LIMITED', status: 429 });
    expect(refused.body.errors[0].message).toMatch(/at most 4 at once/);
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy']) {
      expect(refused.headers[header]).toBeDefined();
    }
    // The refusal consumed nothing: 4 requests counted, 56 left of the minute.
    expect(refused.headers['x-ratelimit-remaining']).toBe('56');
    // Another client was never affected.
    expect((await request(t.url).post('/graphql').set('X-API-Key', key).send(query())).status).toBe(200);
  });

  it('counts refusals for concurrency toward a ban, like any refusal', async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const send = () => request(t.url).post('/graphql').set('X-API-Key', key).send(query());
    // Key lookups are cached for 5 s: one request first, so that none waits on the held database for it.
    expect((await send()).status).toBe(200);
    const hold = await holdPets();
    const held = Array.from({ length: PLAN_CONCURRENCY[Plan.FREE] }, () => send().then((r) => r));
    await settle();
    const refusals = [];
    for (let i = 0; i < 3; i += 1) refusals.push(await send());
    await hold.release();
    await Promise.all(held);

    // BAN_THRESHOLD 2: refusals 1 and 2 are 429, the third starts a ban.
    expect(refusals.map((r) => r.status)).toEqual([429, 429, 403]);
    expect(refusals[2].body.errors[0].extensions.code).toBe('API_KEY_BANNED');
    expect((await send()).status).toBe(403);
  });

  it('frees the slot of a request that ends, however it ends', async () => {
    const { key } = await createApiKey(t, { plan: 'FREE' });
    const send = (body: object) => request(t.url).post('/graphql').set('X-API-Key', key).send(body);
    for (let i = 0; i < 10; i += 1) expect((await send({ query: '{ nope }' })).status).toBe(400);
    const answers = await Promise.all(Array.from({ length: PLAN_CONCURRENCY[Plan.FREE] }, () => send(query())));
    expect(answers.map((answer) => answer.status)).toEqual(Array(PLAN_CONCURRENCY[Plan.FREE]).fill(200));
  });
});
