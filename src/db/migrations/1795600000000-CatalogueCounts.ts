import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Counts of pets by category and status, and of stock rows by status, kept by the database itself
 * so that `totalCount` reads a few counter rows instead of counting the table.
 *
 * Statement-level triggers with transition tables add up each statement's rows, so a bulk load by
 * plain SQL (or COPY) costs one counter update per category and status, not one per row. Counter
 * rows are updated in key order, with the row lock held to the end of the transaction: concurrent
 * writers queue on the counter they share and never lose an update. `refresh_catalogue_counts()`
 * recounts everything, for a restore that ran with triggers off.
 */
/** A counted table, the counter table beside it, and the columns a counter is keyed by. */
const COUNTED = [
  { table: 'pets', counts: 'pet_counts', keys: ['category_id', 'status'] },
  { table: 'inventory_items', counts: 'stock_counts', keys: ['status'] },
] as const;

/** What each event adds up: a trigger may name only the transition tables its event has. */
const EVENTS = {
  insert: (keys: string) => `SELECT ${keys}, 1 AS delta FROM counted_new`,
  delete: (keys: string) => `SELECT ${keys}, -1 AS delta FROM counted_old`,
  update: (keys: string) => `SELECT ${keys}, 1 AS delta FROM counted_new UNION ALL SELECT ${keys}, -1 FROM counted_old`,
} as const;

const REFERENCING = { insert: 'NEW TABLE AS counted_new', delete: 'OLD TABLE AS counted_old', update: 'OLD TABLE AS counted_old NEW TABLE AS counted_new' };

export class CatalogueCounts1795600000000 implements MigrationInterface {
  name = 'CatalogueCounts1795600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "pet_counts" (
        "category_id" bigint NOT NULL,
        "status" "public"."pet_status" NOT NULL,
        "total" bigint NOT NULL,
        CONSTRAINT "PK_pet_counts" PRIMARY KEY ("category_id", "status")
      )
    `);
    await queryRunner.query(`
      CREATE TABLE "stock_counts" (
        "status" "public"."pet_status" NOT NULL,
        "total" bigint NOT NULL,
        CONSTRAINT "PK_stock_counts" PRIMARY KEY ("status")
      )
    `);
    for (const { table, counts, keys } of COUNTED) {
      const columns = keys.join(', ');
      for (const [event, changes] of Object.entries(EVENTS) as [keyof typeof EVENTS, (keys: string) => string][]) {
        await queryRunner.query(`
          CREATE FUNCTION ${counts}_after_${event}() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO ${counts} (${columns}, total)
            SELECT ${columns}, sum(delta) FROM (${changes(columns)}) changes
            GROUP BY ${columns} HAVING sum(delta) <> 0
            ORDER BY ${columns}
            ON CONFLICT (${columns}) DO UPDATE SET total = ${counts}.total + EXCLUDED.total;
            RETURN NULL;
          END $$
        `);
        await queryRunner.query(`
          CREATE TRIGGER "${table}_counted_${event}" AFTER ${event.toUpperCase()} ON "${table}"
          REFERENCING ${REFERENCING[event]} FOR EACH STATEMENT EXECUTE FUNCTION ${counts}_after_${event}()
        `);
      }
      await queryRunner.query(`
        CREATE FUNCTION ${counts}_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          DELETE FROM ${counts};
          RETURN NULL;
        END $$
      `);
      await queryRunner.query(`CREATE TRIGGER "${table}_counted_truncate" AFTER TRUNCATE ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION ${counts}_after_truncate()`);
    }
    const recount = COUNTED.map(({ table, counts, keys }) => {
      const columns = keys.join(', ');
      return `DELETE FROM ${counts}; INSERT INTO ${counts} (${columns}, total) SELECT ${columns}, count(*) FROM ${table} GROUP BY ${columns};`;
    });
    await queryRunner.query(`
      CREATE FUNCTION refresh_catalogue_counts() RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        LOCK TABLE pets, inventory_items IN SHARE MODE;
        ${recount.join(' ')}
      END $$
    `);
    await queryRunner.query('SELECT refresh_catalogue_counts()');
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const { table, counts } of COUNTED) {
      for (const event of [...Object.keys(EVENTS), 'truncate']) {
        await queryRunner.query(`DROP TRIGGER "${table}_counted_${event}" ON "${table}"`);
        await queryRunner.query(`DROP FUNCTION ${counts}_after_${event}()`);
      }
      await queryRunner.query(`DROP TABLE "${counts}"`);
    }
    await queryRunner.query('DROP FUNCTION refresh_catalogue_counts()');
  }
}
