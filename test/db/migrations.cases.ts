import { DataSource, type DataSourceOptions } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { migrate } from '../../src/db/database';
import { seedDemoCatalogue } from '../../src/db/seed';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.close());

it('leaves nothing for TypeORM to change: the migrations match the entities', async () => {
  // TypeORM reads the tables' columns, constraints and indexes with several queries at once on its
  // one connection; pg's pipeline mode (a documented client option) is the way to send them so.
  const { extra } = db.dataSource.options as { extra?: object };
  const reader = new DataSource({ ...db.dataSource.options, extra: { ...extra, pipeline: true } } as DataSourceOptions);
  await reader.initialize();
  try {
    const pending = await reader.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  } finally {
    await reader.destroy();
  }
});

it('runs again without applying anything twice', async () => {
  await migrate(db.dataSource);
  const applied = await db.dataSource.query('SELECT name FROM migrations');
  expect(applied).toHaveLength(db.dataSource.migrations.length);
});

it('loads the demo catalogue into an empty database once', async () => {
  expect(await seedDemoCatalogue(db.dataSource)).toBe(true);
  expect(await seedDemoCatalogue(db.dataSource)).toBe(false);
  const [{ categories, pets, stock }] = await db.dataSource.query(
    `SELECT (SELECT count(*)::int FROM categories) AS categories, (SELECT count(*)::int FROM pets) AS pets,
            (SELECT count(*)::int FROM inventory_items) AS stock`,
  );
  expect({ categories, pets, stock }).toEqual({ categories: 5, pets: 20, stock: 20 });
  const statuses = await db.dataSource.query('SELECT quantity, status FROM inventory_items');
  for (const { quantity, status } of statuses) expect(status).toBe(quantity > 0 ? 'available' : 'sold');
});

it("undoes ChangeTriggers back to DomainRules' place_order, with no trigger of its left, and redoes it", async () => {
  const announcing = async () => {
    const triggers = await db.dataSource.query("SELECT tgname FROM pg_trigger WHERE tgname LIKE '%\\_announced%' ORDER BY tgname");
    const [{ source }] = await db.dataSource.query("SELECT prosrc AS source FROM pg_proc WHERE proname = 'place_order'");
    const [{ builders }] = await db.dataSource.query("SELECT count(*)::int AS builders FROM pg_proc WHERE proname = 'catalogue_change'");
    return { triggers: triggers.map((row: { tgname: string }) => row.tgname), notifies: (source as string).includes('pg_notify'), builders };
  };
  const [{ name: last }] = await db.dataSource.query('SELECT name FROM migrations ORDER BY id DESC LIMIT 1');
  expect(last).toBe('ChangeTriggers1795800000000');
  const announced = {
    triggers: ['announced', 'announced_update'].flatMap((suffix) => ['categories', 'inventory_items', 'orders', 'pets'].map((table) => `${table}_${suffix}`)).sort(),
    notifies: false,
    builders: 1,
  };
  expect(await announcing()).toEqual(announced);

  await db.dataSource.undoLastMigration({ transaction: 'all' });
  expect(await announcing()).toEqual({ triggers: [], notifies: true, builders: 0 });
  await migrate(db.dataSource);
  expect(await announcing()).toEqual(announced);
});
