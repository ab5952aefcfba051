import { Client } from 'pg';
import { createCategory, createPet } from '../helpers/builders';
import { printFigure } from '../helpers/figures';
import { gql } from '../helpers/gql';
import { captureLog } from '../helpers/log-capture';
import { readsServed, replicaAt, type Replication, startReplication, withReplication } from '../helpers/replication';

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
    const locker = new Client({ connectionString: r.primary.url });
    await locker.connect();
    let answer: { status: number; code?: string };
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
      // Sent to the replica now rather than with the next flush, which an idle primary may make seconds later.
      const { rows } = await locker.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn, pg_switch_wal()');
      await replicaAt(slow, rows[0].lsn);
      const before = await readsServed(slow);
      const read = await gql(slow.url, '{ pets(first: 1) { nodes { id name } } }');
      answer = { status: read.status, code: read.errors?.[0]?.extensions.code };
      expect((await readsServed(slow)).replica - before.replica).toBe(1);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    const taken = log.lines.filter((line) => line.replica !== undefined).map((line) => `${line.msg}${line.reason ? ` (${String(line.reason)})` : ''}`);
    printFigure('a statement past its timeout on the replica', { answer, replicaLog: taken });
    expect(taken.filter((line) => line.includes('takes no reads'))).toEqual([]);
    const before = await readsServed(slow);
    expect((await gql(slow.url, '{ pets(first: 2) { nodes { id name } } }')).status).toBe(200);
    expect((await readsServed(slow)).replica - before.replica).toBe(1);
  });
});
