import { MigrationInterface, QueryRunner } from "typeorm";

/** placeOrder idempotency keys, per API key, with the order each one placed. */

export class IdempotencyKeys1795322186073 implements MigrationInterface {
    name = 'IdempotencyKeys1795322186073'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "idempotency_keys" (
                "api_key_id" bigint NOT NULL,
                "key" character varying(255) NOT NULL,
                "request_hash" character(64) NOT NULL,
                "order_id" bigint,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_913ded668c974d019eb0196e639" PRIMARY KEY ("api_key_id", "key")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_5e72f040fdc5efc8eef52a388c" ON "idempotency_keys" ("created_at")
        `);
        await queryRunner.query(`
            ALTER TABLE "idempotency_keys"
            ADD CONSTRAINT "FK_df33199f3504b21d6dfc3ae686d" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "idempotency_keys"
            ADD CONSTRAINT "FK_446856502ff1075430219299f33" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE
            SET NULL ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "idempotency_keys" DROP CONSTRAINT "FK_446856502ff1075430219299f33"
        `);
        await queryRunner.query(`
            ALTER TABLE "idempotency_keys" DROP CONSTRAINT "FK_df33199f3504b21d6dfc3ae686d"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_5e72f040fdc5efc8eef52a388c"
        `);
        await queryRunner.query(`
            DROP TABLE "idempotency_keys"
        `);
    }

}
