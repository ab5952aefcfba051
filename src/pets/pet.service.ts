import type { Count } from '../common/connection';
import { Page, PageRequest, toPage } from '../common/page';
import { trimName } from '../common/validators';
import { isForeignKeyViolation } from '../sql/pg-errors';
import { deleteUnreferenced } from '../sql/rows';
import type { Statements } from '../sql/statements';
import { ApiError, notFound } from '../errors';
import { Pet } from './pet.entity';
import type { NewPetInput, PetUpdateInput } from './pet.inputs';
import {
  CATALOGUE_SIZE,
  countOf,
  type PetFilter,
  type PetRow,
  petFromRow,
  petsByIds,
  petsCount,
  petsCountByCategories,
  petsOfCategoriesPage,
  petsPage,
  petUpdate,
} from './pet.queries';
import { PetStatus } from './pet-status';
import { PET_COLUMNS, type PetShape } from './pet-shape';
import { insertStock } from './stock-status';

export class PetService {
  constructor(private readonly db: Statements) {}

  /** Pets by id, with the columns and relations `shape` asks for: one statement. */
  async findByIds(ids: readonly string[], shape: PetShape = PET_COLUMNS): Promise<Pet[]> {
    return (await this.db.rows<PetRow>(petsByIds(ids, shape))).map((row) => petFromRow(row, shape));
  }

  async list(filter: PetFilter, page: PageRequest, shape: PetShape = PET_COLUMNS): Promise<Page<Pet>> {
    return toPage((await this.db.rows<PetRow>(petsPage(filter, page, shape))).map((row) => petFromRow(row, shape)), page.first);
  }

  async count(filter: PetFilter): Promise<Count> {
    const [{ total }] = await this.db.rows<{ total: number }>(petsCount(filter));
    return countOf(filter, total);
  }

  /** How many pets there are, from the counters. */
  async catalogueSize(): Promise<number> {
    const [{ pets }] = await this.db.rows<{ pets: number }>(CATALOGUE_SIZE);
    return pets;
  }

  /** One page of pets for each of several categories, in one statement. */
  async listByCategories(categoryIds: readonly string[], page: PageRequest, shape: PetShape = PET_COLUMNS): Promise<Map<string, Page<Pet>>> {
    const rows = await this.db.rows<PetRow>(petsOfCategoriesPage(categoryIds, page, shape));
    const grouped = new Map<string, Pet[]>(categoryIds.map((id) => [id, []]));
    for (const row of rows) grouped.get(row.category_id as string)?.push(petFromRow(row, shape));
    return new Map([...grouped].map(([id, pets]) => [id, toPage(pets, page.first)]));
  }

  async countByCategories(categoryIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.db.rows<{ category_id: string; total: number }>(petsCountByCategories(categoryIds));
    return new Map(rows.map((row) => [row.category_id, row.total]));
  }

  /** Creates the pet and its stock (0 units) in one transaction. */
  async create(input: NewPetInput): Promise<Pet> {
    try {
      return await this.db.transaction(async (manager) => {
        const pet = await manager.save(
          manager.create(Pet, {
            name: trimName(input.name),
            categoryId: input.categoryId,
            status: input.status ?? PetStatus.AVAILABLE,
          }),
        );
        // Every pet gets its stock row in the transaction that creates it, with zero units.
        await insertStock(manager, pet.id, 0);
        return pet;
      });
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`Category ${input.categoryId}`);
      throw error;
    }
  }

  /** Changes only the fields given, in one statement (pet.queries.ts petUpdate). */
  async update(id: string, input: PetUpdateInput): Promise<Pet> {
    const changes = { name: input.name === undefined ? undefined : trimName(input.name), category_id: input.categoryId, status: input.status };
    const { text, values } = petUpdate(id, changes);
    let rows: PetRow[];
    try {
      rows = await this.db.query<PetRow[]>(text, values);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw notFound(`Category ${input.categoryId}`);
      throw error;
    }
    if (!rows[0]) throw notFound(`Pet ${id}`);
    return petFromRow(rows[0]);
  }

  /** Removes the pet and its stock; refused while orders name it. */
  delete(id: string): Promise<string> {
    const refusal = new ApiError('PET_HAS_ORDERS', `Pet ${id} has orders; it cannot be deleted`);
    return this.db.repository(Pet, (pets) => deleteUnreferenced(pets, id, 'Pet', refusal));
  }
}
