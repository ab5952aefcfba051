import type { Client } from 'pg';
import { DatabaseTime } from '../../src/db/database-time';
import { Scope, watchSignal } from '../../src/common/scope';
import { IdentitySlots, Slots, SlotWaitTimeout, StatementBudget, STATEMENTS_PER_REQUEST } from '../../src/db/statement-budget';
import { ApiError, RequestRefusal } from '../../src/errors';
import { isDatabaseUnavailable } from '../../src/sql/pg-errors';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { codes, type GraphQLResult, gql } from '../helpers/gql';
import { countStatements, withClientQuery } from '../helpers/statements';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Slots', () => {
  it('lets `size` holders in at once and hands each freed slot to the next waiter in order', async () => {
    const slots = new Slots(2);
    const order: number[] = [];
    const frees = [0, 1, 2, 3].map((i) => slots.take().then((free) => (order.push(i), free)));
    await tick();
    expect(order).toEqual([0, 1]);
    (await frees[1])();
    await tick();
    expect(order).toEqual([0, 1, 2]);
    const free0 = await frees[0];
    free0();
    free0(); // freeing twice frees once
    await tick();
    expect(order).toEqual([0, 1, 2, 3]);
    const late = slots.take().then(() => order.push(4));
    await tick();
    expect(order).toHaveLength(4);
    (await frees[2])();
    await late;
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('gives up waiting after the timeout, leaving the queue intact', async () => {
    const slots = new Slots(1);
    const free = await slots.take();
    const timedOut = await slots.take(20).catch((error: Error) => error);
    expect(timedOut).toBeInstanceOf(SlotWaitTimeout);
    expect((timedOut as SlotWaitTimeout).turnedOver).toBe(false);
    const next = slots.take(1_000);
    free();
    (await next)();
  });

  it('takes a waiter whose client goes out of the queue at once, and counts what is taken', async () => {
    const registry = new IdentitySlots();
    const slots = registry.of('ip:1', 1);
    const free = await slots.take();
    const client = new AbortController();
    const abandoned = slots.take(1_000, watchSignal(client.signal)).catch((error: unknown) => error);
    const next = slots.take(1_000);
    client.abort(new Error('gone'));
    expect(await abandoned).toEqual(new Error('gone'));
    expect(registry.taken()).toBe(1);
    free();
    (await next)();
    expect(registry.taken()).toBe(0);
    await expect(slots.take(1_000, watchSignal(client.signal))).rejects.toThrow('gone');
  });

  it('gives a statement slot back when its request’s scope ends, however the statement ends', async () => {
    const scope = new Scope();
    const slots = new Slots(1);
    const budget = new StatementBudget({ slots: () => slots, waitMs: 1_000, scope });
    const free = await budget.acquire();
    expect(slots.taken).toBe(1);
    scope.end();
    expect(slots.taken).toBe(0);
    free(); // once only
    expect(slots.taken).toBe(0);
  });

  it('keeps an identity’s slots only while one is taken', async () => {
    const registry = new IdentitySlots();
    const first = registry.of('ip:1', 1);
    expect(registry.of('ip:1', 1)).toBe(first);
    const free = await first.take();
    free();
    expect(registry.of('ip:1', 1)).not.toBe(first);
  });
});

describe('StatementBudget', () => {
  it('refuses the statement past its total with QUERY_TOO_COMPLEX', async () => {
    const budget = new StatementBudget({ slots: () => new Slots(1), waitMs: 1_000, total: 3 });
    for (let i = 0; i < 3; i += 1) (await budget.acquire())();
    const refusal = await budget.acquire().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).code).toBe('QUERY_TOO_COMPLEX');
  });

  it('refuses the whole request with 429 RATE_LIMITED when its wait for a slot runs out behind its own running statements, and its later statements at once', async () => {
    const slots = new Slots(1);
    const first = await slots.take();
    const second = slots.take();
    const refusals: RequestRefusal[] = [];
    const budget = new StatementBudget({ slots: () => slots, waitMs: 50, onRefusal: (refusal) => refusals.push(refusal) });
    const waiting = budget.acquire().catch((error: unknown) => error);
    // A statement ahead finishes, the next one ahead takes its slot: the queue moves, too slowly.
    first();
    const held = await second;
    const refusal = await waiting;
    expect(refusal).toBeInstanceOf(RequestRefusal);
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 1 });
    expect((refusal as RequestRefusal).responseHeaders()).toEqual({ 'Retry-After': '1' });
    // The next statement does not queue again.
    await expect(budget.acquire()).rejects.toBe(refusal);
    expect(refusals).toEqual([refusal]);
    held();
  });

  it('reports a request refused once, however many of its statements were waiting when it was', async () => {
    const slots = new Slots(1);
    const first = await slots.take();
    const second = slots.take();
    const refusals: RequestRefusal[] = [];
    const budget = new StatementBudget({ slots: () => slots, waitMs: 50, onRefusal: (refusal) => refusals.push(refusal) });
    // Nineteen aliased fields: nineteen statements waiting at once for the client's one slot.
    const waiting = Array.from({ length: 19 }, () => budget.acquire().catch((error: unknown) => error));
    first();
    const held = await second;
    const refused = await Promise.all(waiting);
    expect(refused.every((error) => error instanceof RequestRefusal)).toBe(true);
    expect(refusals).toHaveLength(1);
    held();
  });

  it('says the database is unavailable when no statement ahead finished in a whole wait, as on a hung database', async () => {
    const slots = new Slots(1);
    const stuck = await slots.take();
    const budget = new StatementBudget({ slots: () => slots, waitMs: 20 });
    const error = await budget.acquire().catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(ApiError);
    expect(isDatabaseUnavailable(error)).toBe(true);
    stuck();
  });

  it('refuses with Retry-After once its identity has spent its database time, and charges what statements hold', async () => {
    let now = 0;
    const meter = new DatabaseTime(() => now);
    const budget = () => new StatementBudget({ slots: () => new Slots(1), waitMs: 1_000, time: { meter, identity: 'ip:1', allowanceMs: 10_000 } });
    const first = budget();
    (await first.acquire())();
    first.charge(10_000);
    const refusal = await budget().acquire().catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 1 });
    expect((refusal as RequestRefusal).responseHeaders()).toEqual({ 'Retry-After': '1' });
    now += 1_000; // a sixth of a second refilled, at 10 s a minute
    (await budget().acquire())();
  });
});

describe('through HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A cost limit high enough to let a request ask for more statements than a request may run.
    t = await startTestApp({ MAX_QUERY_COST: '100000' });
    const category = await createCategory(t);
    await createPet(t, category, 'Rex');
    await createPet(t, category, 'Tom');
  });
  afterAll(() => t.close());

  /** `count` aliased pages of one pet each: one statement apiece. */
  const pages = (count: number) =>
    `{ ${Array.from({ length: count }, (_, i) => `a${i}: pets(first: 1, after: null, filter: { nameContains: "${i % 2 ? 'Rex' : 'Tom'}" }) { nodes { id } }`).join(' ')} }`;

  /** The most statements the pg clients of this process had running at once while `action` ran. */
  async function mostAtOnce(action: () => Promise<unknown>): Promise<number> {
    let running = 0;
    let most = 0;
    await withClientQuery(
      (original) =>
        function (this: Client, ...args: unknown[]) {
          running += 1;
          most = Math.max(most, running);
          const done = () => (running -= 1);
          // pg-pool passes a callback; TypeORM awaits the promise.
          const callback = args.at(-1);
          if (typeof callback === 'function') args[args.length - 1] = (...answer: unknown[]) => (done(), callback(...answer));
          const result = original.apply(this, args);
          return result instanceof Promise ? result.finally(done) : result;
        },
      action,
    );
    return most;
  }

  it('runs an anonymous client’s statements one at a time, over all its requests in flight', async () => {
    const most = await mostAtOnce(() => Promise.all([0, 1, 2, 3].map(() => gql(t.url, pages(20)))));
    expect(most).toBe(1);
  });

  it('runs a BUSINESS key’s statements up to 4 at once (on PostgreSQL; the embedded pool has 1 connection)', async () => {
    const { key } = await createApiKey(t, { plan: 'BUSINESS' });
    // The key's lookup comes before its identity is known, outside any budget: done once first (then cached).
    await gql(t.url, '{ __typename }', undefined, { key });
    const most = await mostAtOnce(() => Promise.all([0, 1, 2, 3, 4, 5].map(() => gql(t.url, pages(20), undefined, { key }))));
    expect(most).toBeLessThanOrEqual(4);
    if (process.env.DATABASE_URL) expect(most).toBeGreaterThan(1);
  });

  // Last: statements within the budget may still run after the answer.
  it(`answers a field past ${STATEMENTS_PER_REQUEST} statements with a field error QUERY_TOO_COMPLEX`, async () => {
    let result: GraphQLResult | undefined;
    const statements = await countStatements(async () => {
      result = await gql(t.url, pages(STATEMENTS_PER_REQUEST + 20), undefined, { key: t.adminKey });
    });
    expect(result?.status).toBe(200);
    // pets is non-null: the first refused field nulls the whole data, and the answer goes out
    // while the statements within the budget may still be queued.
    expect(statements.length).toBeLessThanOrEqual(STATEMENTS_PER_REQUEST);
    expect(codes(result!).length).toBeGreaterThan(0);
    expect(new Set(codes(result!))).toEqual(new Set(['QUERY_TOO_COMPLEX']));
    expect(result?.errors?.[0].message).toMatch(/200 database statements/);
  });
});
