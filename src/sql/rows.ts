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

/** Adds a parameter to `values`, returning its placeholder (`$n`). */
export const bindTo =
  (values: unknown[]) =>
  (value: unknown): string =>
    `$${values.push(value)}`;

/**
 * Sets the given columns of the row with `id` (an undefined value leaves its column alone), in one
 * statement answering `select` over the updated row, `changed`. The UPDATE locks the row and
 * writes only the columns given, so concurrent updates of different columns all stand, where
 * saving an entity read beforehand writes back every column as it was read. With no column
 * given, the row is still locked and returned. Column names come from the caller, never a client.
 */
export function updateColumns(
  table: string,
  id: string,
  changes: Record<string, unknown>,
  select: (bind: (value: unknown) => string) => string,
): { text: string; values: unknown[] } {
  const values: unknown[] = [id];
  const bind = bindTo(values);
  const sets = Object.entries(changes)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => `${column} = ${bind(value)}`);
  const update = `UPDATE ${table} SET ${sets.join(', ') || 'id = id'} WHERE id = $1 RETURNING *`;
  // A data-modifying WITH, so that the statement answers rows, as a SELECT does.
  return { text: `WITH changed AS (${update}) ${select(bind)}`, values };
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
