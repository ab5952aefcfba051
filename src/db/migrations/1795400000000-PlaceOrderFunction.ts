import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * placeOrder in one statement (docs/contract.md §3): the idempotency claim, the refusal checks in
 * their order, the stock take with its derived status, the order insert and the live-update
 * notifications, atomically and in one round trip. A refusal raises, so that nothing it did
 * (the key's claim included) survives; its message is the error code, its detail the figures.
 */
export class PlaceOrderFunction1795400000000 implements MigrationInterface {
    name = 'PlaceOrderFunction1795400000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE FUNCTION "place_order"(
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

                -- The order about to be placed is open: none left means PENDING, not SOLD.
                UPDATE "inventory_items"
                   SET "quantity" = v_quantity - p_quantity,
                       "status" = CASE WHEN v_quantity - p_quantity > 0 THEN 'available' ELSE 'pending' END::"pet_status"
                 WHERE "pet_id" = p_pet_id
                RETURNING "quantity", "status" INTO v_quantity, v_stock_status;
                PERFORM pg_notify(p_channel, json_build_object('type', 'stock', 'petId', p_pet_id::text,
                                                              'quantity', v_quantity, 'status', v_stock_status)::text);
                INSERT INTO "orders" ("pet_id", "quantity", "ship_date", "complete", "api_key_id")
                VALUES (p_pet_id, p_quantity, p_ship_date, false, p_api_key_id)
                RETURNING * INTO v_order;
                IF p_key IS NOT NULL THEN
                    UPDATE "idempotency_keys" SET "order_id" = v_order."id" WHERE "api_key_id" = p_api_key_id AND "key" = p_key;
                END IF;
                PERFORM pg_notify(p_channel, json_build_object('type', 'order', 'kind', 'PLACED', 'id', v_order."id"::text,
                                                              'apiKeyId', p_api_key_id::text)::text);
                RETURN NEXT v_order;
            END
            $$
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            DROP FUNCTION "place_order"(bigint, bigint, integer, timestamptz, varchar, char, bigint, text)
        `);
    }

}
