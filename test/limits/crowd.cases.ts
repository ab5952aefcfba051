import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { ApiKeyRole } from '../../src/auth/role';
import { heldUntilRetryAfterOf, Plan, shedAtLoopDelayOf } from '../../src/auth/plans';
import { Scope } from '../../src/common/scope';
import { CROWDING_REQUESTS } from '../../src/limits/admit';
import { createApiKey } from '../helpers/builders';
import { admittedNow, anonymous, keyOf, type Observed, testAdmitter, type Who } from './helpers/admitter';

/** Clients that ignore Retry-After, and a busy event loop (docs/contract.md §5, "Shedding" and "Clients that ignore Retry-After"). */
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

/** Keeps the event loop busy for `ms`, as a crowd's requests would. */
function busyLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
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
    const observed: Observed = { refusals: [], held: 0 };
    let delayMs = 0;
    const admitter = testAdmitter(
      {
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
});

describe('a client that ignores Retry-After', () => {
  it('has its requests sent before the Retry-After held while it crowds the instance, then let go one at a time; a steady client and others are not held', async () => {
    const observed: Observed = { refusals: [], held: 0 };
    const admitter = testAdmitter({ admissionOf: () => ({ max: 16, queue: 32, waitMs: 1_000 }), holdUntilRetryAfter: heldUntilRetryAfterOf }, observed);
    // The crowding client keeps CROWDING_REQUESTS running; both it and a steady one were told to come back in a second.
    const running = Array.from({ length: CROWDING_REQUESTS }, () => new Scope());
    for (const scope of running) expect((await admitter.admit(anonymous('10.0.0.1'), 'crowd', scope)).refusal).toBeUndefined();
    admitter.told('crowd', 1);
    admitter.told('steady', 1);
    const told = performance.now();

    const answered: string[] = [];
    const first = new Scope();
    const second = new Scope();
    const early = [first, second].map((scope, i) =>
      admitter.admit(anonymous('10.0.0.1'), 'crowd', scope).then(() => {
        answered.push(`crowd ${i + 1}`);
        return performance.now() - told;
      }),
    );
    // Neither a steady client (one request at a time) nor another is held.
    await admitter.admit(anonymous('10.0.0.2'), 'steady', new Scope());
    await admitter.admit(anonymous('10.0.0.3'), 'other', new Scope());
    expect(answered).toEqual([]);
    expect(observed.held).toBe(2);

    // The first goes once the Retry-After has passed; the second only once the first has been answered.
    expect(await early[0]).toBeGreaterThanOrEqual(1_000 - 50);
    expect(answered).toEqual(['crowd 1']);
    first.end();
    await early[1];
    expect(answered).toEqual(['crowd 1', 'crowd 2']);
    for (const scope of [...running, second]) scope.end();
  });

  it('holds anonymous clients and FREE keys, never a paying or admin key, however many of its requests a busy pool keeps on the instance', async () => {
    const observed: Observed = { refusals: [], held: 0 };
    const admitter = testAdmitter({ admissionOf: () => ({ max: 32, queue: 64, waitMs: 1_000 }), holdUntilRetryAfter: heldUntilRetryAfterOf }, observed);
    const callers = everyClass();
    const running: Scope[] = [];
    for (const [name, caller] of callers) {
      for (let i = 0; i < CROWDING_REQUESTS; i += 1) {
        const scope = new Scope();
        running.push(scope);
        expect((await admitter.admit(caller, name, scope)).refusal).toBeUndefined();
      }
      admitter.told(name, 60);
    }
    const settled: string[] = [];
    const admitted = callers.map(([name, caller]) => {
      const scope = new Scope();
      running.push(scope);
      return admitter.admit(caller, name, scope).then(() => name);
    });
    // The paying and admin keys' requests are admitted at once, the others' held for the minute.
    expect(await Promise.all(admitted.slice(2))).toEqual(['PRO', 'BUSINESS', 'admin']);
    for (const request of admitted.slice(0, 2)) void request.then((name) => settled.push(name));
    await new Promise((resolve) => setImmediate(resolve));
    expect(observed.held).toBe(2);
    expect(settled).toEqual([]);
    // Their clients go: the held requests leave.
    for (const scope of running) {
      scope.abort();
      scope.end();
    }
    expect(await Promise.all(admitted.slice(0, 2))).toEqual(['anonymous', 'FREE']);
  });
});
