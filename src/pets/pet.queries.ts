import { COUNT_BOUND } from '../common/bounds';
import type { Count } from '../common/connection';
import type { PageRequest } from '../common/page';
import type { Statement } from '../sql/prepared';
import { containsPattern } from '../sql/like-pattern';
import { keyset } from '../sql/rows';
import { Category } from './category.entity';
import { InventoryItem } from './inventory-item.entity';
import { Pet } from './pet.entity';
import type { PetStatus } from './pet-status';

/** The relations a read joins in, because the GraphQL selection asks for them. */
export interface PetRelations {
  category?: boolean;
  inventory?: boolean;
}

export interface PetFilter {
  status?: PetStatus | null;
  categoryId?: string | null;
  nameContains?: string | null;
}

export interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus;
  c_name?: string;
  c_description?: string | null;
  i_quantity?: number;
  i_status?: PetStatus;
}


function selectFrom(relations: PetRelations): string {
  // created_at is not in the schema: parsing it for every row would be wasted work.
  const columns = ['p.id', 'p.name', 'p.category_id', 'p.status'];
  const joins: string[] = [];
  if (relations.category) {
    columns.push('c.name AS c_name', 'c.description AS c_description');
    joins.push('JOIN categories c ON c.id = p.category_id');
  }
  if (relations.inventory) {
    columns.push('i.quantity AS i_quantity', 'i.status AS i_status');
    joins.push('JOIN inventory_items i ON i.pet_id = p.id');
  }
  return `SELECT ${columns.join(', ')} FROM pets p ${joins.join(' ')}`;
}

/** Adds a parameter to `values`, returning its placeholder. */
const bind = (values: unknown[]) => (value: unknown) => `$${values.push(value)}`;

const relationsKey = (relations: PetRelations) => `${relations.category ? 'c' : ''}${relations.inventory ? 'i' : ''}`;

/** The WHERE clause of a filter; `values` grows with its parameters. */
function whereOf(filter: PetFilter, values: unknown[]): { clauses: string[]; key: string } {
  const clauses: string[] = [];
  let key = '';
  const add = (clause: string, value: unknown, flag: string) => {
    values.push(value);
    clauses.push(clause.replace('?', `$${values.length}`));
    key += flag;
  };
  if (filter.status) add('p.status = ?', filter.status, 's');
  if (filter.categoryId) add('p.category_id = ?', filter.categoryId, 'c');
  if (filter.nameContains) {
    add('p.name ILIKE ?', containsPattern(filter.nameContains), 'n');
    // A name shorter than the text cannot contain it (ILIKE lowers each character to one, as
    // libc collations do): a long text with no trigram to search by is answered by the length index.
    add('char_length(p.name) >= ?', [...filter.nameContains].length, '');
  }
  return { clauses, key };
}

/**
 * A statement's name: none for a name search, so that PostgreSQL plans each for its own text (the
 * trigram index, the length index or a scan) rather than once for every text.
 */
const nameOf = (name: string, filterKey: string) => (filterKey.includes('n') ? '' : name);

export function petsByIds(ids: readonly string[], relations: PetRelations): Statement {
  return {
    name: `pets-by-ids-${relationsKey(relations)}`,
    text: `${selectFrom(relations)} WHERE p.id = ANY($1::bigint[])`,
    values: [ids],
  };
}

/** One page, in id order: LIMIT first + 1, the extra row telling that another page follows. */
export function petsPage(filter: PetFilter, page: PageRequest, relations: PetRelations): Statement {
  const values: unknown[] = [];
  const { clauses, key } = whereOf(filter, values);
  const { after, orderBy, limit } = keyset('p.id', page, bind(values));
  if (after) clauses.push(after);
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  return {
    name: nameOf(`pets-page-${key}${page.afterId ? 'a' : ''}-${relationsKey(relations)}`, key),
    text: `${selectFrom(relations)} ${where} ORDER BY ${orderBy} LIMIT ${bind(values)(limit)}`,
    values,
  };
}

/** The same page of pets for each of several categories, in one statement. */
export function petsOfCategoriesPage(categoryIds: readonly string[], page: PageRequest): Statement {
  const values: unknown[] = [categoryIds];
  const { after, orderBy, limit } = keyset('p.id', page, bind(values));
  const where = ['p.category_id = wanted.id', ...(after ? [after] : [])].join(' AND ');
  return {
    name: `pets-of-categories-page${page.afterId ? '-a' : ''}`,
    text:
      `SELECT page.* FROM unnest($1::bigint[]) AS wanted(id) CROSS JOIN LATERAL ` +
      `(${selectFrom({})} WHERE ${where} ORDER BY ${orderBy} LIMIT ${bind(values)(limit)}) page`,
    values,
  };
}

/**
 * How many pets match. Without a substring filter, from the counters the database keeps by
 * category and status (migration CatalogueCounts): a few rows, however many pets. With one, the
 * matches are counted up to COUNT_BOUND + 1, so that `total` over the bound means "at least".
 */
export function petsCount(filter: PetFilter): Statement {
  const values: unknown[] = [];
  if (filter.nameContains) {
    const { clauses, key } = whereOf(filter, values);
    return {
      name: nameOf(`pets-count-${key}`, key),
      text: `SELECT count(*)::int AS total FROM (SELECT FROM pets p WHERE ${clauses.join(' AND ')} LIMIT ${bind(values)(COUNT_BOUND + 1)}) matches`,
      values,
    };
  }
  const clauses: string[] = [];
  if (filter.status) clauses.push(`status = ${bind(values)(filter.status)}`);
  if (filter.categoryId) clauses.push(`category_id = ${bind(values)(filter.categoryId)}`);
  return {
    name: `pets-counted-${filter.status ? 's' : ''}${filter.categoryId ? 'c' : ''}`,
    text: `SELECT coalesce(sum(total), 0)::int AS total FROM pet_counts ${clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''}`,
    values,
  };
}

/** The number of pets in each of several categories, from the counters. */
export function petsCountByCategories(categoryIds: readonly string[]): Statement {
  return {
    name: 'pets-counted-by-categories',
    text: 'SELECT category_id, sum(total)::int AS total FROM pet_counts WHERE category_id = ANY($1::bigint[]) GROUP BY category_id',
    values: [categoryIds],
  };
}

/** A count read by petsCount: over COUNT_BOUND only when a bounded count stopped. */
export function countOf(total: number): Count {
  return total > COUNT_BOUND ? { total: COUNT_BOUND, exact: false } : { total, exact: true };
}

/** A pet from its row, with the relations the row carries attached. */
export function petFromRow(row: PetRow): Pet {
  const pet = Object.assign(new Pet(), {
    id: row.id,
    name: row.name,
    categoryId: row.category_id,
    status: row.status,
  });
  if (row.c_name !== undefined) {
    pet.category = Object.assign(new Category(), {
      id: row.category_id,
      name: row.c_name,
      description: row.c_description ?? null,
    });
  }
  if (row.i_quantity !== undefined) {
    pet.inventory = Object.assign(new InventoryItem(), { petId: row.id, quantity: row.i_quantity, status: row.i_status });
  }
  return pet;
}
