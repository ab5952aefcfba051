import { MigrationInterface, QueryRunner } from 'typeorm';
import { DomainRules1795700000000 } from './1795700000000-DomainRules';

/**
 * Every committed change announced by the database itself: row triggers on the four tables a
 * subscriber (or a cache) follows `pg_notify` on the changes channel (src/sql/notify.ts) in the
 * writing transaction, so a write made with psql, by a migration or by another service is
 * announced as one made through the API, and only once it commits. The application announces
 * nothing itself any more: `place_order` loses its own notifications. An UPDATE that leaves a row
 * as it was announces nothing. Deleting a stock row announces nothing: only a pet's deletion
 * removes one (ON DELETE CASCADE), and that pet's DELETED says it. An order deleted, complete or
 * not, is CANCELLED: it is gone.
 */
export class ChangeTriggers1795800000000 implements MigrationInterface {
  name = 'ChangeTriggers1795800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The payload of a pet or category change (src/pets/pet.events.ts, category.events.ts), as
    // stock_change() and order_change() build theirs. The three are STABLE, as json_build_object
    // is, so that the planner inlines them into the triggers' expressions: DomainRules' IMMUTABLE
    // ones ran as a function call of their own per row, three times the cost of the rest of a trigger.
    await queryRunner.query(`
      CREATE FUNCTION "catalogue_change"(type text, kind text, id bigint) RETURNS text
      LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT json_build_object('type', type, 'kind', kind, 'id', id::text)::text
      $$
    `);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "stock_change"(pet_id bigint, quantity integer, status "pet_status") RETURNS text
      LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT json_build_object('type', 'stock', 'petId', pet_id::text, 'quantity', quantity, 'status', status)::text
      $$
    `);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "order_change"(kind text, id bigint, api_key_id bigint) RETURNS text
      LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT json_build_object('type', 'order', 'kind', kind, 'id', id::text, 'apiKeyId', api_key_id::text)::text
      $$
    `);
    // TG_ARGV[0]: the change's type, 'pet' or 'category'.
    await queryRunner.query(`
      CREATE FUNCTION "announce_catalogue_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('petstore_changes', CASE TG_OP
          WHEN 'INSERT' THEN "catalogue_change"(TG_ARGV[0], 'CREATED', NEW."id")
          WHEN 'UPDATE' THEN "catalogue_change"(TG_ARGV[0], 'UPDATED', NEW."id")
          ELSE "catalogue_change"(TG_ARGV[0], 'DELETED', OLD."id")
        END);
        RETURN NULL;
      END $$
    `);
    await queryRunner.query(`
      CREATE FUNCTION "announce_stock_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('petstore_changes', "stock_change"(NEW."pet_id", NEW."quantity", NEW."status"));
        RETURN NULL;
      END $$
    `);
    await queryRunner.query(`
      CREATE FUNCTION "announce_order_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('petstore_changes', CASE TG_OP
          WHEN 'INSERT' THEN "order_change"('PLACED', NEW."id", NEW."api_key_id")
          WHEN 'UPDATE' THEN "order_change"('COMPLETED', NEW."id", NEW."api_key_id")
          ELSE "order_change"('CANCELLED', OLD."id", OLD."api_key_id")
        END);
        RETURN NULL;
      END $$
    `);
    for (const [table, type] of [['pets', 'pet'], ['categories', 'category']]) {
      await queryRunner.query(`
        CREATE TRIGGER "${table}_announced" AFTER INSERT OR DELETE ON "${table}"
        FOR EACH ROW EXECUTE FUNCTION "announce_catalogue_change"('${type}')
      `);
      await queryRunner.query(`
        CREATE TRIGGER "${table}_announced_update" AFTER UPDATE ON "${table}"
        FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "announce_catalogue_change"('${type}')
      `);
    }
    await queryRunner.query(`
      CREATE TRIGGER "inventory_items_announced" AFTER INSERT ON "inventory_items"
      FOR EACH ROW EXECUTE FUNCTION "announce_stock_change"()
    `);
    await queryRunner.query(`
      CREATE TRIGGER "inventory_items_announced_update" AFTER UPDATE ON "inventory_items"
      FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "announce_stock_change"()
    `);
    await queryRunner.query(`
      CREATE TRIGGER "orders_announced" AFTER INSERT OR DELETE ON "orders"
      FOR EACH ROW EXECUTE FUNCTION "announce_order_change"()
    `);
    // An order changes once through the API: it is completed.
    await queryRunner.query(`
      CREATE TRIGGER "orders_announced_update" AFTER UPDATE ON "orders"
      FOR EACH ROW WHEN (NEW."complete" AND NOT OLD."complete") EXECUTE FUNCTION "announce_order_change"()
    `);
    // DomainRules' place_order without its pg_notify calls: the triggers announce its writes. It
    // keeps p_channel, unused, so that callers (and instances not yet upgraded) call it as before.
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "place_order"(
          p_api_key_id bigint, p_pet_id bigint, p_quantity integer, p_ship_date timestamptz,
          p_key varchar, p_request_hash char(64), p_key_ttl_ms bigint, p_channel text
      ) RETURNS SETOF "orders" LANGUAGE plpgsql AS $$
      DECLARE
          v_existing "idempotency_keys";
          v_quantity integer;
          v_pet_status "pet_status";
          v_order "orders";
      BEGIN
          IF p_key IS NOT NULL THEN
              DELETE FROM "idempotency_keys" WHERE "api_key_id" = p_api_key_id AND "key" = p_key
                 AND "created_at" < now() - p_key_ttl_ms * interval '1 millisecond';
              -- A concurrent holder of the key makes the INSERT wait for its end: committed,
              -- its order is replayed; rolled back, the key is free. Twice at most: the row
              -- that made the INSERT give way may expire before it can be read.
              FOR attempt IN 1..2 LOOP
                  INSERT INTO "idempotency_keys" ("api_key_id", "key", "request_hash")
                  VALUES (p_api_key_id, p_key, p_request_hash) ON CONFLICT ("api_key_id", "key") DO NOTHING;
                  EXIT WHEN FOUND;
                  SELECT * INTO v_existing FROM "idempotency_keys" WHERE "api_key_id" = p_api_key_id AND "key" = p_key;
                  CONTINUE WHEN NOT FOUND AND attempt = 1;
                  IF v_existing IS NULL OR v_existing."request_hash" <> p_request_hash THEN
                      RAISE EXCEPTION 'IDEMPOTENCY_KEY_REUSED';
                  END IF;
                  SELECT * INTO v_order FROM "orders" WHERE "id" = v_existing."order_id";
                  IF NOT FOUND THEN
                      RAISE EXCEPTION 'IDEMPOTENCY_ORDER_CANCELLED';
                  END IF;
                  RETURN NEXT v_order;
                  RETURN;
              END LOOP;
          END IF;

          SELECT i."quantity", p."status" INTO v_quantity, v_pet_status
            FROM "inventory_items" i JOIN "pets" p ON p."id" = i."pet_id"
           WHERE i."pet_id" = p_pet_id
             FOR UPDATE OF i;
          IF NOT FOUND THEN
              RAISE EXCEPTION 'NOT_FOUND';
          END IF;
          IF v_pet_status <> 'available' THEN
              RAISE EXCEPTION 'PET_NOT_AVAILABLE' USING DETAIL = v_pet_status::text;
          END IF;
          IF v_quantity < p_quantity THEN
              RAISE EXCEPTION 'INSUFFICIENT_STOCK' USING DETAIL = v_quantity::text;
          END IF;

          -- The order about to be placed is open.
          UPDATE "inventory_items"
             SET "quantity" = v_quantity - p_quantity,
                 "status" = "stock_status"(v_quantity - p_quantity, true)
           WHERE "pet_id" = p_pet_id;
          INSERT INTO "orders" ("pet_id", "quantity", "ship_date", "complete", "api_key_id")
          VALUES (p_pet_id, p_quantity, p_ship_date, false, p_api_key_id)
          RETURNING * INTO v_order;
          IF p_key IS NOT NULL THEN
              UPDATE "idempotency_keys" SET "order_id" = v_order."id" WHERE "api_key_id" = p_api_key_id AND "key" = p_key;
          END IF;
          RETURN NEXT v_order;
      END
      $$
    `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['pets', 'categories', 'inventory_items', 'orders']) {
      await queryRunner.query(`DROP TRIGGER "${table}_announced" ON "${table}"`);
      await queryRunner.query(`DROP TRIGGER "${table}_announced_update" ON "${table}"`);
    }
    await queryRunner.query('DROP FUNCTION "announce_order_change"()');
    await queryRunner.query('DROP FUNCTION "announce_stock_change"()');
    await queryRunner.query('DROP FUNCTION "announce_catalogue_change"()');
    await queryRunner.query('DROP FUNCTION "catalogue_change"(text, text, bigint)');
    // Back to DomainRules' own place_order, announcing again, as DomainRules itself goes back:
    // undone (which drops the functions it made), then done again.
    const previous = new DomainRules1795700000000();
    await previous.down(queryRunner);
    await previous.up(queryRunner);
  }
}
