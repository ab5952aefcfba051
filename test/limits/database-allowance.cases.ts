import type { PoolClient } from 'pg';
import request from 'supertest';
import { PLAN_LIMITS, Plan } from '../../src/auth/plans';
import { poolOf } from '../../src/sql/pool';
import { startTestApp, type TestApp, DATABASE_BOUND } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { waitFor } from '../helpers/wait';

/**
 * docs/contract.md §5, "Database time": a client's own backlog of statements, and a client that
 * has spent its database time, are told to slow down (429 RATE_LIMITED with Retry-After), never
 * that the database is unavailable (503), and never toward a ban.
 */
const STATEMENT_TIMEOUT_MS = 1_000;
const PETS = '{ pets(first: 1) { totalCount } }';

let t: TestApp;
let log: CapturedLog;
beforeAll(async () => {
  log = captureLog('info');
  t = await startTestApp({ DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), DATABASE_CONNECT_TIMEOUT_MS: '10000', BAN_THRESHOLD: '2', ...DATABASE_BOUND }, { logger: log.logger });
});
afterAll(() => t.close());

const post = (query: string, key?: string) => {
  const call = request(t.url).post('/graphql').set('Content-Type', 'application/json');
  if (key) call.set('X-API-Key', key);
  return call.send({ query });
};

describe('a client whose statements wait too long for its own slots', () => {
  let held: PoolClient[] = [];
  const releaseHeld = () => {
    for (const client of held) client.release();
    held = [];
  };
  afterEach(releaseHeld);

  it(`gets 429 RATE_LIMITED with Retry-After after DATABASE_STATEMENT_TIMEOUT_MS (${STATEMENT_TIMEOUT_MS} ms), logged as a warning`, async () => {
    // Every pool connection held by the test, which lets one through at a time: the anonymous
    // client's statements (one at once) run, but slower than its queue needs.
    const pool = poolOf(t.db.dataSource);
    held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
    const response = post(
      '{ a: pets(filter: { status: AVAILABLE }) { totalCount } b: pets(filter: { status: PENDING }) { totalCount } c: pets(filter: { status: SOLD }) { totalCount } }',
    ).then((answer) => answer);
    // Its first statement holds the client's slot and waits for a connection; the others wait for the slot.
    await waitFor(async () => pool.waitingCount === 1, 5_000, 'the first statement to wait for a connection');
    // One connection for that statement; the test queues for it next, so the second statement waits again.
    const first = held.pop()!;
    const again = pool.connect();
    first.release();
    held.push(await again);
    await waitFor(async () => log.messages('warn').length > 0, 5_000, 'a refusal');
    releaseHeld();
    const refused = await response;
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.errors[0].extensions).toEqual({ code: 'RATE_LIMITED', status: 429 });
    // The configured wait, not a fixed 5 s.
    expect(refused.body.errors[0].message).toMatch(new RegExp(`own earlier statements held all 1 of its database connections at once for ${STATEMENT_TIMEOUT_MS} ms`));
    expect(log.messages('warn')).toEqual(['request refused: over its database allowance']);
    expect(log.messages('error')).toEqual([]);
    // The client is served again once its backlog is gone.
    expect((await post(PETS)).status).toBe(200);
  });
});

describe('a client that has spent its database time a minute', () => {
  it('gets 429 RATE_LIMITED with Retry-After for requests that need the database, never a ban', async () => {
    const identity = 'ip:127.0.0.1';
    // Overdrawn by a second: six seconds to pay back at FREE's 10 s a minute, longer than this test runs.
    t.app.databaseTime.spend(identity, PLAN_LIMITS[Plan.FREE].databaseMsPerMinute, PLAN_LIMITS[Plan.FREE].databaseMsPerMinute + 1_000);
    for (let i = 0; i < 4; i += 1) {
      const refused = await post(PETS);
      expect(refused.status).toBe(429);
      expect(refused.body.errors[0]).toMatchObject({ extensions: { code: 'RATE_LIMITED', status: 429 } });
      expect(refused.body.errors[0].message).toMatch(/10 s of database time a minute/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(5);
    }
    // What needs no statement is served; another identity's budget is its own.
    expect((await post('{ __typename }')).status).toBe(200);
    const { key } = await createApiKey(t, { plan: 'BUSINESS' });
    expect((await post(PETS, key)).status).toBe(200);
  });

  it('is served again once the time has come back', async () => {
    const identity = 'ip:127.0.0.1';
    // Paid back as a minute of idleness would: spending a negative amount refills the bucket.
    t.app.databaseTime.spend(identity, PLAN_LIMITS[Plan.FREE].databaseMsPerMinute, -2 * PLAN_LIMITS[Plan.FREE].databaseMsPerMinute);
    expect((await post(PETS)).status).toBe(200);
  });
});
