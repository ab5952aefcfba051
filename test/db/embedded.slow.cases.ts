import { type Database, openDatabase } from '../../src/db/database';
import { IN_MEMORY } from '../../src/db/in-memory';
import { PetService } from '../../src/pets/pet.service';
import { poolOf } from '../../src/sql/pool';
import { Statements } from '../../src/sql/statements';

/** The embedded database as `npm start` opens it, whatever database the rest of the run uses. */
let db: Database;
beforeAll(async () => {
  db = await openDatabase({ pgliteDataDir: IN_MEMORY });
});
afterAll(() => db.close());

const pool = () => poolOf(db.dataSource);

it('holds exactly one connection, and never closes it for being idle', () => {
  expect(pool().options.max).toBe(1);
  expect(pool().options.idleTimeoutMillis).toBe(0);
});

it('prepares its statements again on a new connection, although PGlite kept the old ones', async () => {
  const pets = new PetService(new Statements(db.dataSource));
  expect(await pets.findByIds(['1'])).toEqual([]);
  // Drop the connection, as an outage or a restart of the socket would.
  const client = await pool().connect();
  client.release(new Error('dropped by the test'));
  expect(pool().totalCount).toBe(0);
  expect(await pets.findByIds(['1'])).toEqual([]);
  expect(await pets.count({})).toEqual({ total: 0, exact: true });
});
