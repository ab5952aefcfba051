import { In } from 'typeorm';
import type { Page, PageRequest } from '../common/page';
import { trimName } from '../common/validators';
import { deleteUnreferenced, keysetPage, updateColumns } from '../sql/rows';
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

  /** Changes only the fields given, in one statement: concurrent changes of different fields all stand. */
  async update(id: string, input: CategoryUpdateInput): Promise<Category> {
    const changes = {
      name: input.name === undefined ? undefined : trimName(input.name),
      description: input.description === undefined ? undefined : cleanDescription(input.description),
    };
    const { text, values } = updateColumns('categories', id, changes, () => 'SELECT id, name, description FROM changed');
    const [row] = await this.db.query<Pick<Category, 'id' | 'name' | 'description'>[]>(text, values);
    if (!row) throw notFound(`Category ${id}`);
    return Object.assign(new Category(), row);
  }

  /** Refused while pets belong to the category. */
  delete(id: string): Promise<string> {
    const refusal = new ApiError('CATEGORY_NOT_EMPTY', `Category ${id} still has pets; move or delete them first`);
    return this.db.repository(Category, (categories) => deleteUnreferenced(categories, id, 'Category', refusal));
  }
}
