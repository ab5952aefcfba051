import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Substring filters on pet names served by indexes, not scans (docs/contract.md §5): a trigram
 * index (pg_trgm, which PGlite ships too) answers `name ILIKE '%text%'` for any text holding a
 * trigram; an index on the name's length answers what a long text leaves, since a name shorter
 * than the text cannot contain it (100 underscores, say, from which pg_trgm takes no trigram).
 */
export class PetNameSearchIndexes1795500000000 implements MigrationInterface {
    name = 'PetNameSearchIndexes1795500000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS "pg_trgm"`);
        await queryRunner.query(`CREATE INDEX "IDX_pets_name_trigrams" ON "pets" USING gin ("name" gin_trgm_ops)`);
        await queryRunner.query(`CREATE INDEX "IDX_pets_name_length" ON "pets" (char_length("name"))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "IDX_pets_name_length"`);
        await queryRunner.query(`DROP INDEX "IDX_pets_name_trigrams"`);
        // pg_trgm stays: it may have been there before, for others.
    }
}
