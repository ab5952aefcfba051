import request from 'supertest';
import { databaseTimeOfCaller, PLAN_LIMITS, Plan } from '../../src/auth/plans';
import { identityOf } from '../../src/limits/identity';
import { startTestApp, type TestApp, DATABASE_BOUND } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { printFigure } from '../helpers/figures';
import { holdPets, holdTable } from '../helpers/hold';
import { captureLog } from '../helpers/log-capture';
import { partRequest, statusOf } from '../helpers/raw-http';
import { waitFor } from '../helpers/wait';

/**
 * A request whose client goes away at any stage gives back everything it took (docs/contract.md
 * §5, "Concurrency"): its in-flight slot, its place in the queue, its statement slot; a statement
 * still running is cancelled. After each abort the identity runs its full bound at once.
 */
const max = PLAN_LIMITS[Plan.FREE].requestsInFlight;
let t: TestApp;
let petId: string;
const log = captureLog();
beforeAll(async () => {
  // A banned request is answered after a long pause here, so that a test can abort it meanwhile.
  t = await startTestApp({ BAN_PAUSE_MS: '60000', LOG_LEVEL: 'info', ...DATABASE_BOUND }, { logger: log.logger });
  petId = await createPet(t, await createCategory(t), 'Rex');
});
afterAll(() => t.close());

/** A FREE key: 16 requests in flight, 60 a minute. */
const freeKey = async () => (await createApiKey(t, { plan: 'FREE' })).key;
/** A FREE key and the identity its windows count. */
async function freeCaller(): Promise<{ key: string; identity: string }> {
  const { key, id } = await createApiKey(t, { plan: 'FREE' });
  return { key, identity: identityOf({ kind: 'key', key: { id } }) };
}
const send = (key: string) => request(t.url).post('/graphql').set('X-API-Key', key).send({ query: `{ pet(id: "${petId}") { name } }` });

/** A body of fixed length, so that a client may send part of it and the rest later. */
const BODY = JSON.stringify({ query: '{ pets(first: 1) { totalCount } }' });
const part = (key: string, sentBytes = 10, headers: Record<string, string> = {}) => partRequest(t.url, { headers: { 'X-API-Key': key, ...headers }, body: BODY, sentBytes });

interface Gauges {
  running: number;
  waiting: number;
  statementSlots: number;
}

async function gauges(): Promise<Gauges> {
  const text = (await request(t.url).get('/metrics')).text;
  const read = (pattern: RegExp) => Number(pattern.exec(text)?.[1]);
  return {
    running: read(/^petstore_requests_in_flight\{state="running"\} (\d+)/m),
    waiting: read(/^petstore_requests_in_flight\{state="waiting"\} (\d+)/m),
    statementSlots: read(/^petstore_db_statement_slots (\d+)/m),
  };
}

const until = (what: string, holds: (g: Gauges) => boolean) => waitFor(async () => holds(await gauges()), 10_000, what);
const allGiven = () => until('every slot given back', (g) => g.running === 0 && g.waiting === 0 && g.statementSlots === 0);

/** The key runs `max` requests at once: all admitted together, none waiting, all answered 200. */
async function runsFullBound(key: string): Promise<void> {
  // The key's lookup is cached before the database is held.
  expect((await send(key)).status).toBe(200);
  const hold = await holdPets(t);
  const sent = Array.from({ length: max }, () => send(key).then((r) => r));
  await until(`${max} requests admitted at once`, (g) => g.running === max);
  expect((await gauges()).waiting).toBe(0);
  await hold.release();
  expect((await Promise.all(sent)).map((answer) => answer.status)).toEqual(Array(max).fill(200));
  await allGiven();
}

describe('waiters reset behind part-sent bodies that hold the bound', () => {
  it('leaks no slot in 20 cycles', async () => {
    const leaks: number[] = [];
    let key = '';
    for (let cycle = 0; cycle < 20; cycle += 1) {
      // Two cycles a key: within its 60 requests a minute, and enough to lock it out if each leaked 8.
      if (cycle % 2 === 0) key = await freeKey();
      const before = await gauges();
      const holders = await Promise.all(Array.from({ length: max }, () => part(key)));
      await until(`${max} holders in flight`, (g) => g.running + g.waiting >= before.running + before.waiting + max);
      const waiters = await Promise.all(Array.from({ length: 8 }, () => part(key)));
      await until('8 more waiting', (g) => g.waiting >= before.waiting + 8 || g.running + g.waiting >= before.running + before.waiting + max + 8);
      waiters.forEach((waiter) => waiter.reset());
      await Promise.all(waiters.map((waiter) => waiter.closed));
      holders.forEach((holder) => holder.finish());
      const answers = await Promise.all(holders.map((holder) => holder.closed));
      expect(answers.map(statusOf).filter((status) => status !== 200 && status !== 429)).toEqual([]);
      await until('no request waiting', (g) => g.waiting === 0);
      // Settled: the same reading twice in a row.
      let leaked = (await gauges()).running;
      for (let again = (await gauges()).running; again !== leaked; again = (await gauges()).running) leaked = again;
      leaks.push(leaked - before.running);
    }
    printFigure(`slots leaked per cycle ${JSON.stringify(leaks)}, in all ${leaks.reduce((a, b) => a + b, 0)}`);
    expect(leaks).toEqual(Array(20).fill(0));
    await runsFullBound(key);
  });
});


describe('a request whose client goes away', () => {
  it('while its key is looked up takes nothing', async () => {
    const key = await freeKey();
    const lookups = jest.spyOn(t.app.services.apiKeys, 'authenticate');
    const hold = await holdTable(t, 'api_keys');
    try {
      const gone = await part(key, BODY.length);
      await waitFor(() => lookups.mock.results.length > 0, 10_000, 'the key looked up');
      gone.reset();
      await gone.closed;
    } finally {
      await hold.release();
      await Promise.all(lookups.mock.results.map((result) => result.value as Promise<unknown>));
      lookups.mockRestore();
    }
    await allGiven();
    await runsFullBound(key);
  });

  it('in the ban pause gives its slot back at once, however long the pause', async () => {
    const { key, identity } = await freeCaller();
    for (let i = 0; (await t.app.services.limiter.check(identity, { perMinute: 1, perDay: 1 })).kind !== 'banned'; i += 1) expect(i).toBeLessThan(20);
    const gone = await part(key, BODY.length);
    await until('the banned request paused, holding its slot', (g) => g.running === 1);
    gone.reset();
    expect(statusOf(await gone.closed)).toBe(0);
    await allGiven(); // within 10 s of a 60 s pause
    await t.app.services.limiter.unban(identity);
    await runsFullBound(key);
  });

  it('queued for a slot leaves the queue at once', async () => {
    const key = await freeKey();
    const holders = await Promise.all(Array.from({ length: max }, () => part(key)));
    await until(`${max} holders in flight`, (g) => g.running === max);
    const gone = await part(key);
    await until('one waiting', (g) => g.waiting === 1);
    gone.reset();
    await until('the queue empty, the holders still in flight', (g) => g.waiting === 0 && g.running === max);
    holders.forEach((holder) => holder.finish());
    expect((await Promise.all(holders.map((holder) => holder.closed))).map(statusOf)).toEqual(Array(max).fill(200));
    await allGiven();
    await runsFullBound(key);
  });

  it('while its body arrives gives its slot back, and so do 40 such requests with 24 of them queued', async () => {
    const key = await freeKey();
    const gone = await part(key);
    await until('the request in flight', (g) => g.running === 1);
    gone.reset();
    await allGiven();
    const many = await Promise.all(Array.from({ length: 40 }, () => part(key)));
    await until('16 in flight, 24 waiting', (g) => g.running === max && g.waiting === 40 - max);
    many.forEach((request) => request.reset());
    await allGiven();
    await runsFullBound(key);
  });

  it('while its statement runs has it cancelled, its slots given back and its time charged', async () => {
    const { key, identity } = await freeCaller();
    expect((await send(key)).status).toBe(200);
    const allowance = databaseTimeOfCaller({ kind: 'anonymous' });
    const left = () => t.app.databaseTime.balanceOf(identity, allowance);
    const leftBefore = left();
    // Statements of this database waiting on a lock: the gateway's, behind the test's.
    const onLock = async (): Promise<number> =>
      (await t.db.dataSource.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"))[0].n;
    const hold = await holdPets(t);
    try {
      const body = JSON.stringify({ query: `{ pet(id: "${petId}") { name } }` });
      const gone = await partRequest(t.url, { headers: { 'X-API-Key': key }, body, sentBytes: body.length });
      await until('the statement started', (g) => g.statementSlots === 1);
      // On PostgreSQL it runs, waiting on the lock; the embedded database's one connection is the test's, and it waits for it.
      if (!t.db.embedded) await waitFor(async () => (await onLock()) === 1, 10_000, 'the statement waiting on the lock');
      gone.reset();
      // Given back while the lock is still held: the statement did not run to its end.
      await allGiven();
      if (!t.db.embedded) {
        await waitFor(async () => (await onLock()) === 0, 10_000, 'the statement cancelled');
        // Its time on the database, the wait on the lock, is charged all the same (once the cancel's answer is in).
        await waitFor(() => left() < leftBefore, 10_000, 'the cancelled statement charged');
      }
    } finally {
      await hold.release();
    }
    await runsFullBound(key);
    // A cancelled statement, or one never started, is no error of the gateway's.
    expect(log.messages('error')).toEqual([]);
  });
});

describe('pipelined requests whose connection is reset', () => {
  it('give back every slot, the one being answered and the ones queued behind it', async () => {
    const key = await freeKey();
    expect((await send(key)).status).toBe(200);
    const hold = await holdPets(t);
    try {
      const body = JSON.stringify({ query: `{ pet(id: "${petId}") { name } }` });
      const request = `POST /graphql HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      const connection = await partRequest(t.url, { headers: { 'X-API-Key': key, Connection: 'keep-alive' }, body, sentBytes: body.length });
      connection.socket.write(request + request);
      await until('three requests in flight', (g) => g.running === 3);
      const logged = log.lines.length;
      connection.reset();
      await allGiven();
      // Each of them logged once, as aborted.
      await waitFor(() => log.lines.slice(logged).filter((line) => line.msg === 'request aborted').length === 3, 10_000, 'three lines');
      expect(new Set(log.lines.slice(logged).filter((line) => line.msg === 'request aborted').map((line) => line.requestId)).size).toBe(3);
    } finally {
      await hold.release();
    }
    await runsFullBound(key);
  });
});

describe('an aborted request in the log and the metrics', () => {
  it('is logged once, as aborted, and counted under status `aborted`', async () => {
    const key = await freeKey();
    const counted = async () => Number(/^petstore_http_requests_total\{surface="graphql",operation="anonymous",status="aborted"\} (\d+)/m.exec((await request(t.url).get('/metrics')).text)?.[1] ?? 0);
    const before = await counted();
    const gone = await part(key, 10, { 'X-Request-Id': 'gone-while-sending' });
    await until('the request in flight', (g) => g.running === 1);
    gone.reset();
    const linesOf = () => log.lines.filter((line) => line.requestId === 'gone-while-sending');
    await waitFor(() => linesOf().length > 0, 10_000, 'the log line');
    await allGiven();
    expect(linesOf()).toEqual([expect.objectContaining({ msg: 'request aborted', outcome: 'aborted', surface: 'graphql', method: 'POST', path: '/graphql' })]);
    expect(linesOf()[0].status).toBeUndefined();
    expect(await counted()).toBe(before + 1);
  });
});
