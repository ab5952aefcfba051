import { DataSource } from 'typeorm';
import { Page, PageRequest, toPage } from '../common/page';
import { isForeignKeyViolation } from '../db/pg-errors';
import { PreparedStatements } from '../db/prepared';
import { deleteUnreferenced } from '../db/rows';
import { ApiError, notFound } from '../errors';
import { openStock } from '../store/inventory.service';
import { Pet } from './pet.entity';
import type { NewPetInput, PetUpdateInput } from './pet.inputs';
import { type PetFilter, type PetRelations, type PetRow, petFromRow, petsByIds, petsCount, petsPage } from './pet.queries';
import { PetStatus } from './pet-status';

export class PetService {
  private readonly prepared: PreparedStatements;

  constructor(private readonly db: DataSource) {
    this.prepared = new PreparedStatements(db);
  }

  private get pets() {
    return this.db.getRepository(Pet);
  }

  /** Pets by id, with the relations asked for joined in: one statement. */
  async findByIds(ids: readonly string[], relations: PetRelations = {}): Promise<Pet[]> {
    return (await this.prepared.rows<PetRow>(petsByIds(ids, relations))).map(petFromRow);
  }

  async list(filter: PetFilter, page: PageRequest, relations: PetRelations = {}): Promise<Page<Pet>> {
    return toPage((await this.prepared.rows<PetRow>(petsPage(filter, page, relations))).map(petFromRow), page.first);
  }

  async count(filter: PetFilter): Promise<number> {
    const [{ total }] = await this.prepared.rows<{ total: number }>(petsCount(filter));
    return total;
  }

  /** One page of pets for each of several categories, in one statement. */
  async listByCategories(categoryIds: readonly string[], page: PageRequest): Promise<Map<string, Page<Pet>>> {
    const rows: PetRow[] = await this.db.query(
      `SELECT p.id, p.name, p.category_id, p.status
         FROM unnest($1::bigint[]) AS c(id)
         CROSS JOIN LATERAL (
           SELECT * FROM pets
            WHERE category_id = c.id AND ($2::bigint IS NULL OR id > $2::bigint)
            ORDER BY id LIMIT $3
         ) p`,
      [categoryIds, page.afterId ?? null, page.first + 1],
    );
    const grouped = new Map<string, Pet[]>(categoryIds.map((id) => [id, []]));
    for (const row of rows) grouped.get(row.category_id)?.push(petFromRow(row));
    return new Map([...grouped].map(([id, pets]) => [id, toPage(pets, page.first)]));
  }

  async countByCategories(categoryIds: readonly string[]): Promise<Map<string, number>> {
    const rows: { category_id: string; total: number }[] = await this.db.query(
      `SELECT category_id, count(*)::int AS total FROM pets WHERE category_id = ANY($1::bigint[]) GROUP BY category_id`,
      [categoryIds],
    );
    return new Map(rows.map((row) => [row.category_id, row.total]));
  }

  /** Creates the pet and its stock (0 units) in one transaction. */
  async create(input: NewPetInput): Promise<Pet> {
    try {
      return await this.db.transaction(async (manager) => {
        const pet = await manager.save(
          manager.create(Pet, {
            name: input.name.trim(),
            categoryId: input.categoryId,
            status: input.status ?? PetStatus.AVAILABLE,
          }),
        );
        await openStock(manager, pet.id);
        return pet;
      });
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`Category ${input.categoryId}`);
      throw error;
    }
  }

  async update(id: string, input: PetUpdateInput): Promise<Pet> {
    const pet = await this.pets.findOneBy({ id });
    if (!pet) throw notFound(`Pet ${id}`);
    if (input.name !== undefined) pet.name = input.name.trim();
    if (input.categoryId !== undefined) pet.categoryId = input.categoryId;
    if (input.status !== undefined) pet.status = input.status;
    try {
      return await this.pets.save(pet);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`Category ${input.categoryId}`);
      throw error;
    }
  }

  /** Removes the pet and its stock; refused while orders name it. */
  delete(id: string): Promise<string> {
    return deleteUnreferenced(this.pets, id, 'Pet', new ApiError('PET_HAS_ORDERS', `Pet ${id} has orders; it cannot be deleted`));
  }
}
