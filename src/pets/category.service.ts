import { DataSource, In } from 'typeorm';
import { Page, PageRequest, toPage } from '../common/page';
import { isForeignKeyViolation } from '../db/pg-errors';
import { ApiError, notFound } from '../errors';
import { Category } from './category.entity';
import type { CategoryUpdateInput, NewCategoryInput } from './category.inputs';

/** Descriptions are kept trimmed; an empty one is no description. */
const cleanDescription = (text: string | null | undefined) => text?.trim() || null;

export class CategoryService {
  constructor(private readonly db: DataSource) {}

  private get categories() {
    return this.db.getRepository(Category);
  }

  findByIds(ids: readonly string[]): Promise<Category[]> {
    return this.categories.findBy({ id: In([...ids]) });
  }

  async list(page: PageRequest): Promise<Page<Category>> {
    const query = this.categories.createQueryBuilder('category').orderBy('category.id', 'ASC').limit(page.first + 1);
    if (page.afterId) query.where('category.id > :afterId', { afterId: page.afterId });
    return toPage(await query.getMany(), page.first);
  }

  count(): Promise<number> {
    return this.categories.count();
  }

  create(input: NewCategoryInput): Promise<Category> {
    return this.categories.save(
      this.categories.create({ name: input.name.trim(), description: cleanDescription(input.description) }),
    );
  }

  async update(id: string, input: CategoryUpdateInput): Promise<Category> {
    const category = await this.categories.findOneBy({ id });
    if (!category) throw notFound(`Category ${id}`);
    if (input.name !== undefined) category.name = input.name.trim();
    if (input.description !== undefined) category.description = cleanDescription(input.description);
    return this.categories.save(category);
  }

  /** Refused while pets belong to the category (the foreign key decides, so no race lets one through). */
  async delete(id: string): Promise<string> {
    let affected: number | null | undefined;
    try {
      ({ affected } = await this.categories.delete({ id }));
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        throw new ApiError('CATEGORY_NOT_EMPTY', `Category ${id} still has pets; move or delete them first`);
      }
      throw error;
    }
    if (!affected) throw notFound(`Category ${id}`);
    return id;
  }
}
