import type { ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';
import { type Page, type PageRequest, toPage } from '../common/page';
import { ApiError, notFound } from '../errors';
import { isForeignKeyViolation } from './pg-errors';

export type SortOrder = 'ASC' | 'DESC';

/** A keyset page in SQL terms. */
export interface Keyset {
  /** `column > cursor` (`<` going down), when the page starts after a cursor. */
  after?: string;
  /** `column ASC` or `column DESC` */
  orderBy: string;
  /** One more row than the page: toPage reads it as "another page follows". */
  limit: number;
}

/**
 * How every list pages: the rows after the cursor's id in `column` order, going up or down.
 * `bind` adds the cursor as a parameter and returns its placeholder, so that the same clauses
 * serve prepared statements ($n) and query builders (:name).
 */
export function keyset(column: string, page: PageRequest, bind: (id: string) => string, order: SortOrder = 'ASC'): Keyset {
  return {
    after: page.afterId ? `${column} ${order === 'ASC' ? '>' : '<'} ${bind(page.afterId)}` : undefined,
    orderBy: `${column} ${order}`,
    limit: page.first + 1,
  };
}

/** One page of `query` in `column` order (keyset). */
export async function keysetPage<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  column: string,
  page: PageRequest,
  order: SortOrder = 'ASC',
): Promise<Page<T>> {
  const bindCursor = (id: string) => {
    query.setParameter('afterId', id);
    return ':afterId';
  };
  const { after, limit } = keyset(column, page, bindCursor, order);
  query.orderBy(column, order).limit(limit);
  if (after) query.andWhere(after);
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
