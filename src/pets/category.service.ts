import { In } from 'typeorm';
import { DatabaseService } from '../sql/database-service';
import type { Page, PageRequest } from '../common/page';
import { trimName } from '../common/validators';
import { deleteUnreferenced, keysetPage } from '../sql/rows';
import { ApiError, notFound } from '../errors';
import { Category } from './category.entity';
import type { CategoryUpdateInput, NewCategoryInput } from './category.inputs';

/** Descriptions are kept trimmed; an empty one is no description. */
const cleanDescription = (text: string | null | undefined) => (text && trimName(text)) || null;

export class CategoryService extends DatabaseService {

  private get categories() {
    return this.db.getRepository(Category);
  }

  findByIds(ids: readonly string[]): Promise<Category[]> {
    return this.categories.findBy({ id: In([...ids]) });
  }

  list(page: PageRequest): Promise<Page<Category>> {
    return keysetPage(this.categories.createQueryBuilder('category'), 'category.id', page);
  }

  count(): Promise<number> {
    return this.categories.count();
  }

  create(input: NewCategoryInput): Promise<Category> {
    return this.categories.save(
      this.categories.create({ name: trimName(input.name), description: cleanDescription(input.description) }),
    );
  }

  async update(id: string, input: CategoryUpdateInput): Promise<Category> {
    const category = await this.categories.findOneBy({ id });
    if (!category) throw notFound(`Category ${id}`);
    if (input.name !== undefined) category.name = trimName(input.name);
    if (input.description !== undefined) category.description = cleanDescription(input.description);
    return this.categories.save(category);
  }

  /** Refused while pets belong to the category. */
  delete(id: string): Promise<string> {
    const refusal = new ApiError('CATEGORY_NOT_EMPTY', `Category ${id} still has pets; move or delete them first`);
    return deleteUnreferenced(this.categories, id, 'Category', refusal);
  }
}
