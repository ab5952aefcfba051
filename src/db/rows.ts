import type { ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';
import { type Page, type PageRequest, toPage } from '../common/page';
import { ApiError, notFound } from '../errors';
import { isForeignKeyViolation } from './pg-errors';

/**
 * One page of `query` in `column` order: the rows after the cursor's id going up, before it
 * going down.
 */
export async function keysetPage<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  column: string,
  page: PageRequest,
  order: 'ASC' | 'DESC' = 'ASC',
): Promise<Page<T>> {
  query.orderBy(column, order).limit(page.first + 1);
  if (page.afterId) query.andWhere(`${column} ${order === 'ASC' ? '>' : '<'} :afterId`, { afterId: page.afterId });
  return toPage(await query.getMany(), page.first);
}

/**
 * Deletes the row with `id`: NOT_FOUND when there is none, `refusal` while other rows reference
 * it. The foreign keys decide, so no race lets a delete through.
 */
export async function deleteUnreferenced<T extends ObjectLiteral>(
  repository: Repository<T>,
  id: string,
  what: string,
  refusal: ApiError,
): Promise<string> {
  let affected: number | null | undefined;
  try {
    ({ affected } = await repository.delete(id));
  } catch (error) {
    if (isForeignKeyViolation(error)) throw refusal;
    throw error;
  }
  if (!affected) throw notFound(`${what} ${id}`);
  return id;
}
