import { Client } from 'pg';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { printFigure } from '../helpers/figures';
import { gql } from '../helpers/gql';
import type { TestApp } from '../helpers/app';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { readsServed, replicaAt, type Replication, startReplication, withReplication } from '../helpers/replication';

/** Holds every read of pets, on the primary and, once replayed, on the replica, until `release`. */
async function lockPets(r: Replication, on: TestApp) {
  const locker = new Client({ connectionString: r.primary.url });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
  // Sent to the replica now rather than with the next flush, which an idle primary may make seconds later.
  const { rows } = await locker.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn, pg_switch_wal()');
  await replicaAt(on, rows[0].lsn);
  return {
    async release() {
      await locker.query('ROLLBACK');
      await locker.end();
    },
  };
}

/** The lines an instance logged about its replica's state, with their reasons. */
const replicaLines = (log: CapturedLog) => log.lines.filter((line) => line.replica !== undefined).map((line) => `${line.msg}${line.reason ? ` (${String(line.reason)})` : ''}`);

withReplication('a replica that is reachable but slow, and the turns it adds', () => {
  let r: Replication;
  beforeAll(async () => {
    r = await startReplication();
    const [a] = r.instances;
    await createPet(a, await createCategory(a, 'Dogs'), 'Rex');
  }, 120_000);
  afterAll(async () => {
    await r?.close();
  });

  it("counts the replica's connections with the primary's as statement turns, and keeps the paying reserve of the sum", async () => {
    const turns = r.instances[0].app.databaseTurns;
    printFigure('turns with one replica', { capacity: turns.capacity, unpaidLimit: turns.unpaidLimit });
    // DATABASE_POOL_SIZE (10) on the primary and as many on the replica; DATABASE_RESERVE_PERCENT (20) of the 20 kept for paying plans.
    expect([turns.capacity, turns.unpaidLimit]).toEqual([20, 16]);
  });

  it('keeps taking reads after a statement on it runs past its timeout', async () => {
    const log = captureLog('info');
    const slow = await r.startInstance({ DATABASE_STATEMENT_TIMEOUT_MS: '300' }, { logger: log.logger });
    await replicaAt(slow);
    // A lock the replica replays at once (only commits wait out its apply delay): reads of pets wait there, on the primary too.
    const lock = await lockPets(r, slow);
    let answer: { status: number; code?: string };
    try {
      const before = await readsServed(slow);
      const read = await gql(slow.url, '{ pets(first: 1) { nodes { id name } } }');
      answer = { status: read.status, code: read.errors?.[0]?.extensions.code };
      expect((await readsServed(slow)).replica - before.replica).toBe(1);
    } finally {
      await lock.release();
    }
    const taken = replicaLines(log);
    printFigure('a statement past its timeout on the replica', { answer, replicaLog: taken });
    expect(taken.filter((line) => line.includes('takes no reads'))).toEqual([]);
    const before = await readsServed(slow);
    expect((await gql(slow.url, '{ pets(first: 2) { nodes { id name } } }')).status).toBe(200);
    expect((await readsServed(slow)).replica - before.replica).toBe(1);
  });

  it('keeps taking reads while every connection of its pool is busy', async () => {
    const log = captureLog('info');
    // One connection to each server: a second read waits for the replica's past the connect timeout.
    const busy = await r.startInstance({ DATABASE_POOL_SIZE: '1', DATABASE_CONNECT_TIMEOUT_MS: '200', DATABASE_STATEMENT_TIMEOUT_MS: '1500' }, { logger: log.logger });
    // A paying key, whose statements may take both turns (the replica's connection and the primary's).
    const { key } = await createApiKey(r.instances[0], { name: 'busy reader', plan: 'ENTERPRISE', requestsPerMinute: 100_000, requestsPerDay: 1_000_000 });
    await replicaAt(busy);
    const lock = await lockPets(r, busy);
    let statuses: number[];
    try {
      const answers = await Promise.all([1, 2].map((first) => gql(busy.url, `{ pets(first: ${first}) { nodes { id name } } }`, {}, { key })));
      statuses = answers.map(({ status }) => status);
    } finally {
      await lock.release();
    }
    const taken = replicaLines(log);
    printFigure('two reads on a replica pool of one connection, held by a lock', { statuses, replicaLog: taken });
    expect(taken.filter((line) => line.includes('takes no reads'))).toEqual([]);
  });
});
