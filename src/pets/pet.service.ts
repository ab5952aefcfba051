import { DataSource, In, SelectQueryBuilder } from 'typeorm';
import { Page, PageRequest, toPage } from '../common/page';
import { containsPattern } from '../common/sql';
import { isForeignKeyViolation } from '../db/pg-errors';
import { ApiError, notFound } from '../errors';
import { openStock } from '../store/inventory.service';
import { Pet } from './pet.entity';
import type { NewPetInput, PetUpdateInput } from './pet.inputs';
import { PetStatus } from './pet-status';

export interface PetFilter {
  status?: PetStatus | null;
  categoryId?: string | null;
  nameContains?: string | null;
}

interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus;
  created_at: Date;
}

const petFromRow = (row: PetRow): Pet =>
  Object.assign(new Pet(), {
    id: row.id,
    name: row.name,
    categoryId: row.category_id,
    status: row.status,
    createdAt: row.created_at,
  });

export class PetService {
  constructor(private readonly db: DataSource) {}

  private get pets() {
    return this.db.getRepository(Pet);
  }

  findByIds(ids: readonly string[]): Promise<Pet[]> {
    return this.pets.findBy({ id: In([...ids]) });
  }

  async list(filter: PetFilter, page: PageRequest): Promise<Page<Pet>> {
    const query = this.matching(filter).orderBy('pet.id', 'ASC').limit(page.first + 1);
    if (page.afterId) query.andWhere('pet.id > :afterId', { afterId: page.afterId });
    return toPage(await query.getMany(), page.first);
  }

  count(filter: PetFilter): Promise<number> {
    return this.matching(filter).getCount();
  }

  /** One page of pets for each of several categories, in one statement. */
  async listByCategories(categoryIds: readonly string[], page: PageRequest): Promise<Map<string, Page<Pet>>> {
    const rows: PetRow[] = await this.db.query(
      `SELECT p.id, p.name, p.category_id, p.status, p.created_at
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

  /** Refused while orders name the pet (the foreign key decides, so no race lets one through). */
  async delete(id: string): Promise<string> {
    let affected: number | null | undefined;
    try {
      ({ affected } = await this.pets.delete({ id }));
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        throw new ApiError('PET_HAS_ORDERS', `Pet ${id} has orders; it cannot be deleted`);
      }
      throw error;
    }
    if (!affected) throw notFound(`Pet ${id}`);
    return id;
  }

  private matching(filter: PetFilter): SelectQueryBuilder<Pet> {
    const query = this.pets.createQueryBuilder('pet');
    if (filter.status) query.andWhere('pet.status = :status', { status: filter.status });
    if (filter.categoryId) query.andWhere('pet.category_id = :categoryId', { categoryId: filter.categoryId });
    if (filter.nameContains) {
      query.andWhere(`pet.name ILIKE :pattern`, { pattern: containsPattern(filter.nameContains) });
    }
    return query;
  }
}
