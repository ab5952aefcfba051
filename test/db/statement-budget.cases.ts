import type { Client } from 'pg';
import { DatabaseTime } from '../../src/db/database-time';
import { type Claimant, FairTurns, type Tier, TurnWaitTimeout } from '../../src/common/fair-turns';
import { Scope, watchSignal } from '../../src/common/scope';
import { StatementBudget, STATEMENTS_PER_REQUEST } from '../../src/db/statement-budget';
import { ApiError, RequestRefusal } from '../../src/errors';
import { DatabaseNotAnswering, isDatabaseUnavailable } from '../../src/sql/pg-errors';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { codes, type GraphQLResult, gql } from '../helpers/gql';
import { countStatements, withClientQuery } from '../helpers/statements';

const tick = () => new Promise((resolve) => setImmediate(resolve));

const claimant = (key: string, weight = 1, max = 1, tier: Tier = 'paying'): Claimant => ({ key, max, weight, tier });
const turnsOf = (capacity: number, anonymousShare = 0.25, now?: () => number) => new FairTurns(capacity, { anonymousShare, now });

/** `count` waits of `who`, each noting its key in `order` when it gets its turn; their frees in order. */
function queue(turns: FairTurns, who: Claimant, count: number, order: string[]): Promise<() => void>[] {
  return Array.from({ length: count }, () => turns.take(who).then((free) => (order.push(who.key), free)));
}

describe('FairTurns', () => {
  it('lets `capacity` holders in at once, each key up to its own bound, and hands a freed turn to its key’s longest waiter', async () => {
    const turns = turnsOf(3);
    const order: string[] = [];
    const a = claimant('a', 1, 2);
    const frees = [...queue(turns, a, 3, order), ...queue(turns, claimant('b'), 1, order)];
    await tick();
    expect(order).toEqual(['a', 'a', 'b']); // a's third waits for a's bound, not for the pool
    expect(turns.held).toBe(3);
    const free0 = await frees[0];
    free0();
    free0(); // freeing twice frees once
    await tick();
    expect(order).toEqual(['a', 'a', 'b', 'a']);
    expect(turns.held).toBe(3);
    for (const free of frees.slice(1)) (await free)();
    expect(turns.held).toBe(0);
    expect(turns.waiting).toBe(0);
  });

  it('serves keys waiting in proportion to their weights, not in order of arrival', async () => {
    const turns = turnsOf(1);
    const order: string[] = [];
    // Each turn given back as soon as it is taken.
    const serve = (who: Claimant, count: number) =>
      Array.from({ length: count }, () => turns.take(who).then((free) => (order.push(who.key), queueMicrotask(free))));
    const holder = await turns.take(claimant('holder'));
    // The light key queues first, and as much.
    const served = [...serve(claimant('light', 1), 20), ...serve(claimant('heavy', 4), 20)];
    holder();
    await Promise.all(served);
    const first20 = order.slice(0, 20);
    // 4 : 1 while both wait; then the light key's rest.
    expect(first20.filter((key) => key === 'heavy')).toHaveLength(16);
    expect(order.slice(25).every((key) => key === 'light')).toBe(true);
  });

  it('gives a key that has just come the next turn, whatever the backlog of the others', async () => {
    const turns = turnsOf(1);
    const order: string[] = [];
    const holder = await turns.take(claimant('holder'));
    const crowd = queue(turns, claimant('crowd', 16), 50, order);
    holder();
    (await crowd[0])();
    await tick();
    const newcomer = queue(turns, claimant('newcomer', 1), 1, order);
    (await crowd[1])();
    await newcomer[0];
    expect(order).toEqual(['crowd', 'crowd', 'newcomer']);
  });

  it('holds the capped class to its share while others wait, and lets it take every turn while nobody else does', async () => {
    // 8 turns, a quarter for the capped class: 2.
    const turns = turnsOf(8, 0.25);
    expect(turns.anonymousLimit).toBe(2);
    const order: string[] = [];
    const anonymous = Array.from({ length: 8 }, (_, i) => claimant(`ip:${i}`, 1, 1, 'anonymous'));
    const held = await Promise.all(anonymous.map((who) => turns.take(who)));
    expect(turns.held).toBe(8); // nobody else waits: the class may take all
    const later = anonymous.flatMap((who) => queue(turns, who, 1, order));
    const keyed = queue(turns, claimant('key:pro', 4, 8), 8, order);
    for (const free of held) free();
    await tick();
    // Of the 8 turns freed, the class gets back only its 2.
    expect(order.filter((key) => key === 'key:pro')).toHaveLength(6);
    expect(order.filter((key) => key.startsWith('ip:'))).toHaveLength(2);
    // Once the key waits no more, the class takes what is free again.
    for (const free of keyed.slice(0, 6)) (await free)();
    await tick();
    expect(order.filter((key) => key === 'key:pro')).toHaveLength(8);
    for (const free of keyed.slice(6)) (await free)();
    await tick();
    expect(order.filter((key) => key.startsWith('ip:'))).toHaveLength(8);
    for (const free of later) (await free)();
    expect(turns.held).toBe(0);
  });

  describe('the reserve for paying claimants', () => {
    // The default pool: 10 connections, 2 kept for paying claimants, the unpaid class held to 5
    // while a paying one waits, anonymous clients to 2 while anyone else waits.
    const pool = () => new FairTurns(10, { reserve: 2, unpaidShare: 0.5, anonymousShare: 0.25 });
    const free = (i: number) => claimant(`key:free${i}`, 2, 1, 'free');
    const anonymous = (i: number) => claimant(`ip:${i}`, 1, 1, 'anonymous');
    const heldOf = (turns: FairTurns, prefix: string, count: number) => Array.from({ length: count }, (_, i) => turns.heldBy(`${prefix}${i}`)).reduce((a, b) => a + b, 0);

    it('never gives the unpaid class the reserve, even with nobody else about, and gives a paying key a reserved turn at once', async () => {
      const turns = pool();
      expect([turns.unpaidLimit, turns.unpaidLimitWhilePayingWaits, turns.anonymousLimit]).toEqual([8, 5, 2]);
      const order: string[] = [];
      const crowd = Array.from({ length: 12 }, (_, i) => queue(turns, free(i), 1, order)[0]);
      await tick();
      expect([turns.held, turns.waiting]).toEqual([8, 4]); // 2 turns free, and kept
      expect(turns.outlook(free(99))).toMatchObject({ classBound: { tier: 'unpaid', limit: 8, because: 'reserve' } });
      // A paying key's statements start at once, both of them.
      const pro = claimant('key:pro', 4, 2);
      const proTurns = [turns.take(pro), turns.take(pro)];
      expect(turns.heldBy('key:pro')).toBe(2);
      // The reserve taken, a paying claimant waits; meanwhile every turn the class gives back is
      // the paying claimant's until the class is down to 5, where the fair order alone would serve
      // the FREE keys that have waited longer.
      const waiting = queue(turns, claimant('key:enterprise', 16, 8), 4, order);
      // Its share is what the class must leave it, 5 of 10 at its weight, not its weight's share of
      // everyone's (16 of 16 + 4 + 12 × 2: 3.6 connections).
      expect(turns.outlook(claimant('key:enterprise', 16, 8))).toMatchObject({ ahead: 4, share: 5 * (16 / 20), classBound: undefined });
      for (const turn of crowd.slice(0, 3)) {
        (await turn)();
        await tick();
      }
      expect(order.slice(8)).toEqual(['key:enterprise', 'key:enterprise', 'key:enterprise']);
      expect(heldOf(turns, 'key:free', 12)).toBe(5);
      // No paying claimant left: the class takes its 8 again, and the reserve stays free though a FREE key waits.
      for (const turn of [...proTurns, ...waiting]) (await turn)();
      await tick();
      expect([heldOf(turns, 'key:free', 12), turns.held, turns.waiting]).toEqual([8, 8, 1]);
      for (const turn of crowd.slice(3)) (await turn)();
      expect(turns.held).toBe(0);
    });

    it('keeps FREE keys from being pushed out by anonymous clients, who keep their own smaller bound', async () => {
      const turns = pool();
      const order: string[] = [];
      const addresses = Array.from({ length: 12 }, (_, i) => queue(turns, anonymous(i), 1, order)[0]);
      await tick();
      expect(turns.held).toBe(8);
      const keys = Array.from({ length: 6 }, (_, i) => queue(turns, free(i), 1, order)[0]);
      expect(turns.outlook(anonymous(99))).toMatchObject({ classBound: { tier: 'anonymous', limit: 2, because: 'others wait' } });
      // Every turn the addresses give back goes to a FREE key while the addresses hold 2 or more.
      for (const turn of addresses.slice(0, 6)) (await turn)();
      await tick();
      expect([heldOf(turns, 'key:free', 6), heldOf(turns, 'ip:', 12)]).toEqual([6, 2]);
      for (const turn of [...addresses.slice(6), ...keys]) (await turn)();
      expect(turns.held).toBe(0);
    });

    it('says, when a wait of the unpaid class runs out, that its bound was the cause', async () => {
      const turns = pool();
      const held = await Promise.all(Array.from({ length: 8 }, (_, i) => turns.take(free(i))));
      const stuck = await turns.take(free(8), 20).catch((error: unknown) => error);
      expect(stuck).toMatchObject({ turnedOver: false, classBound: { tier: 'unpaid', limit: 8, because: 'reserve' } });
      const refused = await new StatementBudget({ turns, claimant: free(9), startWithinMs: 20, waitMs: 60_000 }).acquire().catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect((refused as Error).message).toMatch(/^FREE keys and anonymous clients together hold at most 8 of the database's 10 connections at any time, the rest being kept for paying plans, and all of those are busy: a statement waited 20 ms/);
      for (const turn of held) turn();
    });

    it('holds the unpaid class to its `unpaidMax` at any time (the cores its database time keeps busy), a paying key not', async () => {
      const turns = new FairTurns(10, { reserve: 2, unpaidShare: 0.5, anonymousShare: 0.25, unpaidMax: 1 });
      expect([turns.unpaidLimit, turns.unpaidLimitWhilePayingWaits, turns.anonymousLimit]).toEqual([1, 1, 1]);
      const first = await turns.take(free(0));
      const stuck = await turns.take(free(1), 20).catch((error: unknown) => error);
      expect(stuck).toMatchObject({ turnedOver: false, classBound: { tier: 'unpaid', limit: 1, because: 'unpaid max' } });
      const refused = await new StatementBudget({ turns, claimant: free(2), startWithinMs: 20, waitMs: 60_000 }).acquire().catch((error: unknown) => error);
      expect((refused as Error).message).toMatch(/^FREE keys and anonymous clients together hold at most 1 of the database's 10 connections at any time, as many as their database time a second keeps busy, and all of those are busy/);
      const paying = await Promise.all(Array.from({ length: 9 }, () => turns.take(claimant('key:enterprise', 8, 16))));
      expect(turns.held).toBe(10);
      for (const turn of [first, ...paying]) turn();
    });

    it('leaves the unpaid class one turn of a pool of one (the embedded database)', async () => {
      const turns = new FairTurns(1, { reserve: 1, unpaidShare: 0.5, anonymousShare: 0.25 });
      (await turns.take(free(0)))();
      expect(turns.held).toBe(0);
    });
  });

  it('gives up waiting after the timeout, saying whether turns moved and whether the key’s own ran meanwhile', async () => {
    const turns = turnsOf(1);
    const free = await turns.take(claimant('a'));
    const stuck = await turns.take(claimant('b'), 20).catch((error: Error) => error);
    expect(stuck).toBeInstanceOf(TurnWaitTimeout);
    expect(stuck).toMatchObject({ turnedOver: false, ownRan: false });
    const own = await turns.take(claimant('a'), 20).catch((error: Error) => error);
    expect(own).toMatchObject({ turnedOver: false, ownRan: true });
    const next = turns.take(claimant('b'), 1_000);
    free();
    (await next)();
  });

  it('takes a waiter whose client goes out of the queue at once', async () => {
    const turns = turnsOf(1);
    const free = await turns.take(claimant('a'));
    const client = new AbortController();
    const abandoned = turns.take(claimant('b'), 1_000, watchSignal(client.signal)).catch((error: unknown) => error);
    const next = turns.take(claimant('c'), 1_000);
    client.abort(new Error('gone'));
    expect(await abandoned).toEqual(new Error('gone'));
    expect(turns.waiting).toBe(1);
    free();
    (await next)();
    expect(turns.held).toBe(0);
    await expect(turns.take(claimant('b'), 1_000, watchSignal(client.signal))).rejects.toThrow('gone');
  });

  it('expects a key’s wait from its own statements ahead, their hold time and its weighted share, after one turnover', async () => {
    let now = 0;
    const turns = turnsOf(4, 0.25, () => now);
    const anonymous = claimant('ip:1', 1, 1, 'anonymous');
    expect(turns.outlook(anonymous)).toMatchObject({ waitMs: 0, others: 0 });
    // Four keys of weights 1, 1, 2 and 4 each hold a turn for 100 ms, and queue three more each.
    const who = [anonymous, claimant('ip:2', 1, 1, 'anonymous'), claimant('free', 2), claimant('pro', 4)];
    const firsts = await Promise.all(who.map((c) => turns.take(c)));
    now += 100;
    for (const free of firsts) free(); // hold times measured: 100 ms
    const held = await Promise.all(who.map((c) => turns.take(c)));
    const waits = who.map((c) => [turns.take(c), turns.take(c), turns.take(c)]);
    // ip:1 has 3 ahead; its weight is 1 of 8: half a connection, but the class may hold only 1
    // (a quarter of 4) while keys wait, shared by two addresses: 0.5 either way.
    const outlook = turns.outlook(anonymous);
    expect(outlook).toMatchObject({ ahead: 3, others: 3, share: 0.5, capacity: 4 });
    expect(outlook.waitMs).toBeCloseTo(100 / 4 + (3 * 100) / 0.5);
    // pro: 4 of 8 is 2 connections, beyond its own bound of 1.
    expect(turns.outlook(who[3])).toMatchObject({ share: 1, classBound: undefined });
    expect(turns.outlook(who[3]).waitMs).toBeCloseTo(25 + 300);
    for (const free of held) free();
    for (const free of waits.flat()) (await free)();
    expect(turns.held).toBe(0);
  });
});

describe('StatementBudget', () => {
  const allowance = (turns: FairTurns, who = claimant('ip:1'), extra: Partial<ConstructorParameters<typeof StatementBudget>[0]> = {}) => ({
    turns,
    claimant: who,
    waitMs: 1_000,
    ...extra,
  });

  it('gives a statement’s turn back when its request’s scope ends, however the statement ends', async () => {
    const scope = new Scope();
    const turns = turnsOf(1);
    const budget = new StatementBudget(allowance(turns, claimant('ip:1'), { scope }));
    const free = await budget.acquire();
    expect(turns.held).toBe(1);
    scope.end();
    expect(turns.held).toBe(0);
    free(); // once only
    expect(turns.held).toBe(0);
  });

  it('refuses the statement past its total with QUERY_TOO_COMPLEX', async () => {
    const budget = new StatementBudget(allowance(turnsOf(1), claimant('ip:1'), { total: 3 }));
    for (let i = 0; i < 3; i += 1) (await budget.acquire())();
    const refusal = await budget.acquire().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).code).toBe('QUERY_TOO_COMPLEX');
  });

  it('refuses the whole request with 429 RATE_LIMITED when its wait runs out behind its own running statements, and its later statements at once', async () => {
    const turns = turnsOf(2);
    const first = await turns.take(claimant('ip:1'));
    const second = turns.take(claimant('ip:1'));
    const refusals: RequestRefusal[] = [];
    const budget = new StatementBudget(allowance(turns, claimant('ip:1'), { waitMs: 50, onRefusal: (refusal) => refusals.push(refusal) }));
    const waiting = budget.acquire().catch((error: unknown) => error);
    // A statement ahead finishes, the next one ahead takes its turn: the queue moves, too slowly.
    first();
    const held = await second;
    const refusal = await waiting;
    expect(refusal).toBeInstanceOf(RequestRefusal);
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 1 });
    expect((refusal as RequestRefusal).message).toMatch(/own earlier statements held all 1 of its database connections at once for 50 ms/);
    expect((refusal as RequestRefusal).responseHeaders()).toEqual({ 'Retry-After': '1' });
    // The next statement does not queue again.
    await expect(budget.acquire()).rejects.toBe(refusal);
    expect(refusals).toEqual([refusal]);
    held();
  });

  it('reports a request refused once, however many of its statements were waiting, and takes them all out of the queue', async () => {
    const turns = turnsOf(2);
    const first = await turns.take(claimant('ip:1'));
    const second = turns.take(claimant('ip:1'));
    const refusals: RequestRefusal[] = [];
    const budget = new StatementBudget(allowance(turns, claimant('ip:1'), { waitMs: 50, onRefusal: (refusal) => refusals.push(refusal) }));
    // Nineteen aliased fields: nineteen statements waiting at once for the client's one turn.
    const waiting = Array.from({ length: 19 }, () => budget.acquire().catch((error: unknown) => error));
    first();
    const held = await second;
    const refused = await Promise.all(waiting);
    expect(refused.every((error) => error instanceof RequestRefusal)).toBe(true);
    expect(refusals).toHaveLength(1);
    expect(turns.waiting).toBe(0);
    held();
  });

  it('says the database is unavailable when no statement ahead finished in a whole wait, as on a hung database', async () => {
    const turns = turnsOf(1);
    const stuck = await turns.take(claimant('ip:2'));
    const budget = new StatementBudget(allowance(turns, claimant('ip:1'), { waitMs: 20 }));
    const error = await budget.acquire().catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(DatabaseNotAnswering);
    expect(isDatabaseUnavailable(error)).toBe(true);
    stuck();
  });

  it('refuses at once, 429 naming its share, a request whose own statements waiting would not start within its bound', async () => {
    let now = 0;
    const turns = turnsOf(2, 0.25, () => now);
    const address = claimant('ip:1', 1, 1, 'anonymous');
    const measured = await turns.take(address);
    now += 200;
    measured(); // statements of 200 ms
    const other = claimant('ip:2', 1, 1, 'anonymous');
    const key = claimant('key:free', 1, 2);
    const held = [await turns.take(address), await turns.take(other)];
    const queued = [turns.take(address), turns.take(key)];
    // One of its own waits ahead, 200 ms at its share: by weight 2 × 1/3 connection, but the class
    // holds 1 connection while the key waits, shared by two addresses: 0.5. Then one turnover, 100 ms.
    const budget = new StatementBudget(allowance(turns, address, { startWithinMs: 250 }));
    const refusal = await budget.acquire().catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 1 });
    expect((refusal as Error).message).toMatch(/^Anonymous clients together hold at most 1 of the database's 2 connections while keyed clients wait; at this client's share of them \(0\.50 of 2 connections, with 2 other clients waiting\), its 1 statements waiting would take about 500 ms to start/);
    expect(turns.waiting).toBe(2); // it never queued
    // The key, alone in its queue, is not refused: its wait is one turnover.
    const keyed = new StatementBudget(allowance(turns, claimant('key:pro', 4, 2), { startWithinMs: 250 }));
    const keyedTurn = keyed.acquire();
    for (const free of held) free();
    await Promise.all([...queued, keyedTurn].map((turn) => turn.then((free) => free())));
    expect(turns.held).toBe(0);
  });

  it('waits no longer than its bound for a request not started: 429 when its own statements held its turns while the pool’s moved, else 503', async () => {
    const turns = turnsOf(1);
    const held = await turns.take(claimant('key:a', 16));
    const refused = await new StatementBudget(allowance(turns, claimant('ip:1', 1, 1, 'anonymous'), { startWithinMs: 30, waitMs: 60_000 }))
      .acquire()
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, retryAfterSeconds: 1 });
    expect((refused as Error).message).toMatch(/busy with clients of this priority or higher: a statement waited 30 ms/);
    held();
    // Its own statement holds its one turn while another key's turn comes back: its own backlog.
    const pool = turnsOf(2);
    const own = await pool.take(claimant('ip:1', 1, 1, 'anonymous'));
    const other = await pool.take(claimant('key:b'));
    const pending = new StatementBudget(allowance(pool, claimant('ip:1', 1, 1, 'anonymous'), { startWithinMs: 30, waitMs: 60_000 })).acquire().catch((error: unknown) => error);
    other();
    expect(await pending).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 1 });
    own();
  });

  it('refuses with Retry-After once its identity has spent its database time, and charges what statements hold', async () => {
    let now = 0;
    const meter = new DatabaseTime(() => now);
    const budget = () => new StatementBudget(allowance(turnsOf(1), claimant('ip:1'), { time: { meter, identity: 'ip:1', allowanceMs: 10_000 } }));
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

  /**
   * The most pg clients of this process that had a statement running at once while `action` ran.
   * Counted by connection: a connection runs its queries one after another (a new one reads its
   * backend pid ahead of its first statement, sql/cancel.ts).
   */
  async function mostAtOnce(action: () => Promise<unknown>): Promise<number> {
    const inFlight = new Map<Client, number>();
    let most = 0;
    await withClientQuery(
      (original) =>
        function (this: Client, ...args: unknown[]) {
          inFlight.set(this, (inFlight.get(this) ?? 0) + 1);
          most = Math.max(most, inFlight.size);
          const done = () => {
            const left = inFlight.get(this)! - 1;
            if (left === 0) inFlight.delete(this);
            else inFlight.set(this, left);
          };
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
