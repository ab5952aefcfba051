import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import pino from 'pino';
import { ApiKeyRole } from '../../src/auth/role';
import { Plan, shedAtLoopDelayOf } from '../../src/auth/plans';
import { Scope } from '../../src/common/scope';
import { Admitter, LOOP_SHED_FROM_REQUESTS } from '../../src/limits/admit';
import { RateLimiter } from '../../src/limits/limiter';
import { MemoryLimiterStore } from '../../src/limits/memory.store';
import { createApiKey } from '../helpers/builders';

type Who = { kind: 'anonymous'; address: string } | { kind: 'key'; key: { id: string; plan: Plan; role: ApiKeyRole; quota: { perMinute: number; perDay: number } } };
const keyOf = (plan: Plan, role = ApiKeyRole.CLIENT): Who => ({ kind: 'key', key: { id: `${plan}-${role}`, plan, role, quota: { perMinute: 1_000, perDay: 1_000 } } });

/** Clients that ignore Retry-After, and a busy event loop (docs/contract.md §5, "Shedding" and "Clients that ignore Retry-After"). */
/** Asks nothing of the database: on the embedded one, a statement's own work would delay the loop. */
const NO_DATABASE = '{ __typename }';

/** Keeps the event loop busy for `ms`, as a crowd's requests would. */
function busyLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** The holds counted so far, from the metrics. */
async function holds(t: TestApp): Promise<number> {
  const text = (await request(t.url).get('/metrics')).text;
  return Number(/^petstore_retry_after_holds_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
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
    const refusals: string[] = [];
    let delayMs = 0;
    const admitter = new Admitter<Who>({
      limiter: new RateLimiter(new MemoryLimiterStore(), { threshold: 10, durationMs: 60_000 }),
      metrics: { observeRefusal: (reason) => refusals.push(reason), observeAdmissionWait: () => undefined, observeHeld: () => undefined },
      logger: pino({ level: 'silent' }),
      quotaOf: () => ({ perMinute: 1_000, perDay: 1_000 }),
      admissionOf: () => ({ max: 16, queue: 32, waitMs: 1_000 }),
      loopDelay: { ms: () => delayMs, shedAtOf: (caller) => shedAtLoopDelayOf(caller, 50) },
    });
    const callers: [string, Who][] = [
      ['anonymous', { kind: 'anonymous', address: '10.0.0.1' }],
      ['FREE', keyOf(Plan.FREE)],
      ['PRO', keyOf(Plan.PRO)],
      ['BUSINESS', keyOf(Plan.BUSINESS)],
      ['admin', keyOf(Plan.FREE, ApiKeyRole.ADMIN)],
    ];
    // Each caller already has LOOP_SHED_FROM_REQUESTS requests running.
    for (const [name, caller] of callers) {
      for (let i = 0; i < LOOP_SHED_FROM_REQUESTS; i += 1) expect((await admitter.admit(caller, name, new Scope())).refusal).toBeUndefined();
    }
    const admittedAt = async (ms: number) => {
      delayMs = ms;
      const admitted: string[] = [];
      for (const [name, caller] of callers) {
        const scope = new Scope();
        const { refusal } = await admitter.admit(caller, name, scope);
        scope.end();
        if (!refusal) admitted.push(name);
        else expect(refusal).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, retryAfterSeconds: 1, message: expect.stringMatching(/^This instance is busy: its work runs \d+ ms late/) });
      }
      return admitted;
    };
    expect(await admittedAt(49)).toEqual(['anonymous', 'FREE', 'PRO', 'BUSINESS', 'admin']);
    expect(await admittedAt(50)).toEqual(['FREE', 'PRO', 'BUSINESS', 'admin']);
    expect(await admittedAt(100)).toEqual(['PRO', 'BUSINESS', 'admin']);
    expect(await admittedAt(10_000)).toEqual(['PRO', 'BUSINESS', 'admin']);
    expect(refusals).toEqual(['shed', 'shed', 'shed', 'shed', 'shed']);
    // One fewer running: not shed, however late the loop.
    const anonymous = new Scope();
    expect((await admitter.admit({ kind: 'anonymous', address: '10.0.0.2' }, 'fresh', anonymous)).refusal).toBeUndefined();
  });
});

describe('a client that ignores Retry-After', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Every refusal starts a ban of a second: its 403 says Retry-After 1.
    t = await startTestApp({ RETRY_AFTER_HOLD: 'true', BAN_THRESHOLD: '0', BAN_SECONDS: '1' });
  });
  afterAll(() => t.close());

  it('has its requests sent before the Retry-After held until then, then answered one at a time; other clients are not held', async () => {
    const { key } = await createApiKey(t, { plan: 'ENTERPRISE', requestsPerMinute: 1, requestsPerDay: 1_000 });
    const { key: other } = await createApiKey(t, { plan: 'PRO' });
    const send = (apiKey: string) => request(t.url).post('/graphql').set('X-API-Key', apiKey).send({ query: NO_DATABASE });
    expect((await send(key)).status).toBe(200);
    const banned = await send(key);
    expect(banned.status).toBe(403);
    const told = performance.now();
    expect(banned.headers['retry-after']).toBe('1');
    const before = await holds(t);
    // Two more at once, before the Retry-After: both held. Each, once let go, is refused again
    // (its minute is still used up), which starts another ban of a second.
    const at = (answer: request.Response) => ({ status: answer.status, at: performance.now() - told });
    const early = Promise.all([send(key).then(at), send(key).then(at)]);
    // Meanwhile another client is answered at once.
    expect((await send(other)).status).toBe(200);
    const answers = (await early).sort((a, b) => a.at - b.at);
    expect(await holds(t)).toBe(before + 2);
    expect(answers.map((answer) => answer.status)).toEqual([403, 403]);
    // The first not before the Retry-After; the second not before the one its predecessor was given.
    expect(answers[0].at).toBeGreaterThanOrEqual(1_000 - 50);
    expect(answers[1].at - answers[0].at).toBeGreaterThanOrEqual(1_000 - 50);
  });
});
