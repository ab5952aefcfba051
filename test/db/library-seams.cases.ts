import { Pool, type PoolClient } from 'pg';
import { Category } from '../../src/pets/category.entity';
import { cancelRunning } from '../../src/sql/cancel';
import { poolOf } from '../../src/sql/pool';
import { type Budget, Statements } from '../../src/sql/statements';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/database';
import { waitFor } from '../helpers/wait';

/**
 * What the statement budget relies on in TypeORM and pg (sql/pool.ts, sql/statements.ts), so that
 * an upgrade which changes it fails here: where the pool is, and that one statement of ours is
 * exactly one checkout of a pool connection, however many SQL statements it sends.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.close());

/** What happened, in order: the budget's calls, and pg's `acquire` and `release` events of the pool. */
async function eventsOf(action: (statements: Statements) => Promise<unknown>): Promise<string[]> {
  const pool = poolOf(db.dataSource);
  const events: string[] = [];
  const budget: Budget = {
    acquire: async () => {
      events.push('take');
      return () => events.push('give back');
    },
    charge: () => events.push('charge'),
  };
  const acquired = () => events.push('checkout');
  const released = () => events.push('checkin');
  pool.on('acquire', acquired);
  pool.on('release', released);
  try {
    await action(new Statements(db.dataSource).within(budget));
  } finally {
    pool.off('acquire', acquired);
    pool.off('release', released);
  }
  return events;
}

const ONE_STATEMENT = ['take', 'checkout', 'charge', 'checkin', 'give back'];

it('TypeORM’s PostgresDriver keeps pg’s own Pool as `master`', () => {
  expect(poolOf(db.dataSource)).toBeInstanceOf(Pool);
});

it('a prepared statement is one checkout of pg’s pool, charged while it holds the connection', async () => {
  expect(await eventsOf((statements) => statements.rows({ name: '', text: 'SELECT 1 AS one', values: [] }))).toEqual(ONE_STATEMENT);
});

it('a TypeORM query runner checks out one connection on connect(), and its manager’s reads and transactions use no other', async () => {
  expect(
    await eventsOf((statements) =>
      statements.repository(Category, async (categories) => {
        const category = await categories.save(categories.create({ name: 'Seams' }));
        await categories.findOneBy({ id: category.id });
        await categories.delete(category.id);
      }),
    ),
  ).toEqual(ONE_STATEMENT);
  expect(
    await eventsOf((statements) =>
      statements.transaction(async (manager) => {
        await manager.query('SELECT 1');
        await manager.getRepository(Category).count();
      }),
    ),
  ).toEqual(ONE_STATEMENT);
  expect(await eventsOf((statements) => statements.query('SELECT 1'))).toEqual(ONE_STATEMENT);
});

it('a failed statement still gives its connection and its turn back', async () => {
  const events = await eventsOf((statements) => statements.query('SELECT no_such_column').catch(() => undefined));
  expect(events).toEqual(ONE_STATEMENT);
  const prepared = await eventsOf((statements) => statements.rows({ name: '', text: 'SELECT no_such_column', values: [] }).catch(() => undefined));
  expect(prepared).toEqual(ONE_STATEMENT);
});

/**
 * pg-pool stops listening to a connection's errors when it hands it out, and pg emits 'error'
 * when the server ends the connection (a restart): a checkout with no statement running, and no
 * listener of its own, would end the process. guardCheckouts (sql/pool.ts) relies on the pool's
 * `acquire` coming before that and `release` after it listens again.
 */
it('a checked-out connection has an error listener before any statement runs, and none of ours is left after release', async () => {
  const pool = poolOf(db.dataSource);
  const client = await new Promise<PoolClient>((resolve, reject) =>
    pool.connect((error, connection, done) => {
      if (error || !connection) return reject(error);
      // Here, in pg-pool's own callback, its idle listener is gone and no caller has added one.
      expect(connection.listenerCount('error')).toBe(1);
      expect(() => connection.emit('error', new Error('terminating connection due to administrator command'))).not.toThrow();
      done(new Error('dropped'));
      resolve(connection);
    }),
  );
  // Released with an error: discarded, with only the pool's listener, which outlives the connection.
  expect(client.listenerCount('error')).toBe(1);
  const kept = await pool.connect();
  kept.release();
  expect(kept.listenerCount('error')).toBe(1);
});

/**
 * node-postgres has no public cancel: sql/cancel.ts reads each connection's backend pid as the pool
 * connects it (pg-pool's `onConnect`) and cancels with `pg_cancel_backend` on a connection of its own. The embedded
 * database runs one statement at a time, so a cancel there could only follow the statement: it is
 * not sent, and the statement runs to its end.
 */
it('a running statement is cancelled through pg_cancel_backend on PostgreSQL, and left to its end on the embedded database', async () => {
  const client = await poolOf(db.dataSource).connect();
  try {
    const sleep = db.embedded ? 'SELECT pg_sleep(0.2)' : 'SELECT pg_sleep(30)';
    const outcome = client.query(sleep).then(
      () => 'ran to its end',
      (error: { code?: unknown }) => `failed with ${String(error.code)}`,
    );
    if (!db.embedded) {
      const running = async () =>
        (await adminQuery<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1 AND state = $2', [sleep, 'active']))[0]!.n === 1;
      await waitFor(running, 10_000, 'the statement running');
    }
    cancelRunning(client);
    expect(await outcome).toBe(db.embedded ? 'ran to its end' : 'failed with 57014');
  } finally {
    client.release(new Error('cancelled on'));
  }
});
