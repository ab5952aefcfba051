import { MigrationInterface, QueryRunner } from 'typeorm';
import { PlaceOrderFunction1795400000000 } from './1795400000000-PlaceOrderFunction';

/**
 * The stock status rule and the stock and order notifications, each written once, in the database
 * (docs/architecture.md, "Where each rule lives"): `place_order` runs inside PostgreSQL to stay one
 * statement, so what it applies lives there, and the TypeScript paths call the same functions
 * rather than keep a twin. To change a rule, write a migration that replaces its function; every
 * path follows.
 */
export class DomainRules1795700000000 implements MigrationInterface {
  name = 'DomainRules1795700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // docs/contract.md §3: units left → available; none left and an open order → pending; else sold.
    await queryRunner.query(`
      CREATE FUNCTION "stock_status"(quantity integer, has_open_order boolean) RETURNS "pet_status"
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN quantity > 0 THEN 'available' WHEN has_open_order THEN 'pending' ELSE 'sold' END::"pet_status"
      $$
    `);
    // The payloads src/pets/pet.events.ts and src/store/order.events.ts describe; ids travel as text (int64).
    await queryRunner.query(`
      CREATE FUNCTION "stock_change"(pet_id bigint, quantity integer, status "pet_status") RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT json_build_object('type', 'stock', 'petId', pet_id::text, 'quantity', quantity, 'status', status)::text
      $$
    `);
    await queryRunner.query(`
      CREATE FUNCTION "order_change"(kind text, id bigint, api_key_id bigint) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT json_build_object('type', 'order', 'kind', kind, 'id', id::text, 'apiKeyId', api_key_id::text)::text
      $$
    `);
    // PlaceOrderFunction's place_order, with its stock status and notifications taken from the functions above.
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "place_order"(
          p_api_key_id bigint, p_pet_id bigint, p_quantity integer, p_ship_date timestamptz,
          p_key varchar, p_request_hash char(64), p_key_ttl_ms bigint, p_channel text
      ) RETURNS SETOF "orders" LANGUAGE plpgsql AS $$
      DECLARE
          v_existing "idempotency_keys";
          v_quantity integer;
          v_pet_status "pet_status";
          v_stock_status "pet_status";
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
           WHERE "pet_id" = p_pet_id
          RETURNING "quantity", "status" INTO v_quantity, v_stock_status;
          PERFORM pg_notify(p_channel, "stock_change"(p_pet_id, v_quantity, v_stock_status));
          INSERT INTO "orders" ("pet_id", "quantity", "ship_date", "complete", "api_key_id")
          VALUES (p_pet_id, p_quantity, p_ship_date, false, p_api_key_id)
          RETURNING * INTO v_order;
          IF p_key IS NOT NULL THEN
              UPDATE "idempotency_keys" SET "order_id" = v_order."id" WHERE "api_key_id" = p_api_key_id AND "key" = p_key;
          END IF;
          PERFORM pg_notify(p_channel, "order_change"('PLACED', v_order."id", p_api_key_id));
          RETURN NEXT v_order;
      END
      $$
    `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    // Back to PlaceOrderFunction's own place_order before the functions it no longer needs go.
    const previous = new PlaceOrderFunction1795400000000();
    await previous.down(queryRunner);
    await previous.up(queryRunner);
    await queryRunner.query('DROP FUNCTION "order_change"(text, bigint, bigint)');
    await queryRunner.query('DROP FUNCTION "stock_change"(bigint, integer, "pet_status")');
    await queryRunner.query('DROP FUNCTION "stock_status"(integer, boolean)');
  }
}
