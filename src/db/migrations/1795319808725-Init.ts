import { MigrationInterface, QueryRunner } from "typeorm";

/** The catalogue, stock, orders and API keys. `pet_status` is shared by pets and stock. */

export class Init1795319808725 implements MigrationInterface {
    name = 'Init1795319808725'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TYPE "public"."api_key_plan" AS ENUM('free', 'pro', 'business', 'enterprise')
        `);
        await queryRunner.query(`
            CREATE TYPE "public"."api_key_role" AS ENUM('client', 'admin')
        `);
        await queryRunner.query(`
            CREATE TABLE "api_keys" (
                "id" BIGSERIAL NOT NULL,
                "name" character varying(100) NOT NULL,
                "key_hash" character(64) NOT NULL,
                "plan" "public"."api_key_plan" NOT NULL,
                "role" "public"."api_key_role" NOT NULL DEFAULT 'client',
                "requests_per_minute" integer,
                "requests_per_day" integer,
                "from_environment" boolean NOT NULL DEFAULT false,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "revoked_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_57384430aa1959f4578046c9b8" ON "api_keys" ("key_hash")
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_25eecfeb6b995e667461254a54" ON "api_keys" ("from_environment")
            WHERE "from_environment"
        `);
        await queryRunner.query(`
            CREATE TABLE "categories" (
                "id" BIGSERIAL NOT NULL,
                "name" character varying(100) NOT NULL,
                "description" character varying(500),
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_24dbc6126a28ff948da33e97d3b" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE TYPE "public"."pet_status" AS ENUM('available', 'pending', 'sold')
        `);
        await queryRunner.query(`
            CREATE TABLE "pets" (
                "id" BIGSERIAL NOT NULL,
                "name" character varying(100) NOT NULL,
                "category_id" bigint NOT NULL,
                "status" "public"."pet_status" NOT NULL DEFAULT 'available',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_d01e9e7b4ada753c826720bee8b" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_acae2054b27b27b9f0797fbd62" ON "pets" ("category_id")
        `);
        await queryRunner.query(`
            CREATE TABLE "inventory_items" (
                "pet_id" bigint NOT NULL,
                "quantity" integer NOT NULL DEFAULT '0',
                "status" "public"."pet_status" NOT NULL DEFAULT 'sold',
                CONSTRAINT "inventory_never_negative" CHECK ("quantity" >= 0),
                CONSTRAINT "PK_a638364357454c2699511e32cf3" PRIMARY KEY ("pet_id")
            )
        `);
        await queryRunner.query(`
            CREATE TABLE "orders" (
                "id" BIGSERIAL NOT NULL,
                "pet_id" bigint NOT NULL,
                "quantity" integer NOT NULL,
                "ship_date" TIMESTAMP WITH TIME ZONE,
                "complete" boolean NOT NULL DEFAULT false,
                "api_key_id" bigint NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "order_quantity_range" CHECK (
                    "quantity" >= 1
                    AND "quantity" <= 1000
                ),
                CONSTRAINT "PK_710e2d4957aa5878dfe94e4ac2f" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_06a6d2d009a43dcfd3f966ed26" ON "orders" ("pet_id")
        `);
        await queryRunner.query(`
            CREATE INDEX "IDX_cdfa0711d1586df6f2b0051fc2" ON "orders" ("api_key_id", "id")
        `);
        await queryRunner.query(`
            ALTER TABLE "pets"
            ADD CONSTRAINT "FK_acae2054b27b27b9f0797fbd62d" FOREIGN KEY ("category_id") REFERENCES "categories"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "inventory_items"
            ADD CONSTRAINT "FK_a638364357454c2699511e32cf3" FOREIGN KEY ("pet_id") REFERENCES "pets"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "orders"
            ADD CONSTRAINT "FK_06a6d2d009a43dcfd3f966ed26a" FOREIGN KEY ("pet_id") REFERENCES "pets"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
        await queryRunner.query(`
            ALTER TABLE "orders"
            ADD CONSTRAINT "FK_a9091ba9f69acb065c45a67750d" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            ALTER TABLE "orders" DROP CONSTRAINT "FK_a9091ba9f69acb065c45a67750d"
        `);
        await queryRunner.query(`
            ALTER TABLE "orders" DROP CONSTRAINT "FK_06a6d2d009a43dcfd3f966ed26a"
        `);
        await queryRunner.query(`
            ALTER TABLE "inventory_items" DROP CONSTRAINT "FK_a638364357454c2699511e32cf3"
        `);
        await queryRunner.query(`
            ALTER TABLE "pets" DROP CONSTRAINT "FK_acae2054b27b27b9f0797fbd62d"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_cdfa0711d1586df6f2b0051fc2"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_06a6d2d009a43dcfd3f966ed26"
        `);
        await queryRunner.query(`
            DROP TABLE "orders"
        `);
        await queryRunner.query(`
            DROP TABLE "inventory_items"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_acae2054b27b27b9f0797fbd62"
        `);
        await queryRunner.query(`
            DROP TABLE "pets"
        `);
        await queryRunner.query(`
            DROP TYPE "public"."pet_status"
        `);
        await queryRunner.query(`
            DROP TABLE "categories"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_25eecfeb6b995e667461254a54"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."IDX_57384430aa1959f4578046c9b8"
        `);
        await queryRunner.query(`
            DROP TABLE "api_keys"
        `);
        await queryRunner.query(`
            DROP TYPE "public"."api_key_role"
        `);
        await queryRunner.query(`
            DROP TYPE "public"."api_key_plan"
        `);
    }

}
