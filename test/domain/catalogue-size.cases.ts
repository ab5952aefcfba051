import pino from 'pino';
import { CATALOGUE_SIZE_TTL_MS, CatalogueSize } from '../../src/pets/catalogue-size';
import { PetService } from '../../src/pets/pet.service';
import { Statements } from '../../src/sql/statements';
import { testClock } from '../helpers/clock';
import { createTestDatabase, type TestDatabase } from '../helpers/database';

/** The catalogue's size as scans are priced by it: read from the counters, kept a few seconds, one read at a time. */
let db: TestDatabase;
let categoryId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  [{ id: categoryId }] = await db.dataSource.query("INSERT INTO categories (name) VALUES ('Kind') RETURNING id");
});
afterAll(() => db.close());

const addPets = (count: number) =>
  db.dataSource.query(`INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, $1, 'available' FROM generate_series(1, $2) i`, [categoryId, count]);

it('answers the size last read until it is CATALOGUE_SIZE_TTL_MS old, then reads it again in the background, once', async () => {
  const clock = testClock();
  let reads = 0;
  const service = new PetService(new Statements(db.dataSource));
  const counted: PetService = Object.assign(Object.create(service) as PetService, {
    catalogueSize: () => {
      reads += 1;
      return service.catalogueSize();
    },
  });
  const size = new CatalogueSize(counted, pino({ level: 'silent' }), clock);
  await addPets(3);
  expect(await size.refresh()).toBe(3);
  await addPets(4);
  clock.advance(CATALOGUE_SIZE_TTL_MS - 1);
  expect(size.current()).toBe(3);
  expect(reads).toBe(1);

  clock.advance(1);
  // Stale: the last size is answered while one read runs, however many ask meanwhile.
  expect([size.current(), size.current(), size.current()]).toEqual([3, 3, 3]);
  expect(reads).toBe(2);
  expect(await size.refresh()).toBe(7);
  expect(reads).toBe(2);
  expect(size.current()).toBe(7);
});

it('keeps the last size when a read fails, and reads again a TTL later', async () => {
  const clock = testClock();
  let failing = false;
  const service = new PetService(new Statements(db.dataSource));
  const flaky: PetService = Object.assign(Object.create(service) as PetService, {
    catalogueSize: () => (failing ? Promise.reject(new Error('connection refused')) : service.catalogueSize()),
  });
  const size = new CatalogueSize(flaky, pino({ level: 'silent' }), clock);
  const before = await size.refresh();
  failing = true;
  clock.advance(CATALOGUE_SIZE_TTL_MS);
  expect(await size.refresh()).toBe(before);
  failing = false;
  await addPets(2);
  expect(size.current()).toBe(before); // read a moment ago, failed: not again until a TTL has passed
  clock.advance(CATALOGUE_SIZE_TTL_MS);
  size.current();
  expect(await size.refresh()).toBe(before + 2);
});
