import { In } from 'typeorm';
import type { Page, PageRequest } from '../common/page';
import { trimName } from '../common/validators';
import { deleteUnreferenced, keysetPage } from '../sql/rows';
import type { Statements } from '../sql/statements';
import { ApiError, notFound } from '../errors';
import { Category } from './category.entity';
import type { CategoryUpdateInput, NewCategoryInput } from './category.inputs';

/** Descriptions are kept trimmed; an empty one is no description. */
const cleanDescription = (text: string | null | undefined) => (text && trimName(text)) || null;

export class CategoryService {
  constructor(private readonly db: Statements) {}

  findByIds(ids: readonly string[]): Promise<Category[]> {
    return this.db.repository(Category, (categories) => categories.findBy({ id: In([...ids]) }));
  }

  list(page: PageRequest): Promise<Page<Category>> {
    return this.db.repository(Category, (categories) => keysetPage(categories.createQueryBuilder('category'), 'category.id', page));
  }

  count(): Promise<number> {
    return this.db.repository(Category, (categories) => categories.count());
  }

  create(input: NewCategoryInput): Promise<Category> {
    return this.db.repository(Category, (categories) =>
      categories.save(categories.create({ name: trimName(input.name), description: cleanDescription(input.description) })),
    );
  }

  async update(id: string, input: CategoryUpdateInput): Promise<Category> {
    const category = await this.db.repository(Category, (categories) => categories.findOneBy({ id }));
    if (!category) throw notFound(`Category ${id}`);
    if (input.name !== undefined) category.name = trimName(input.name);
    if (input.description !== undefined) category.description = cleanDescription(input.description);
    return this.db.repository(Category, (categories) => categories.save(category));
  }

  /** Refused while pets belong to the category. */
  delete(id: string): Promise<string> {
    const refusal = new ApiError('CATEGORY_NOT_EMPTY', `Category ${id} still has pets; move or delete them first`);
    return this.db.repository(Category, (categories) => deleteUnreferenced(categories, id, 'Category', refusal));
  }
}
