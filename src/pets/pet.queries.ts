import { COUNT_BOUND } from '../common/bounds';
import type { Count } from '../common/connection';
import type { PageRequest } from '../common/page';
import type { Statement } from '../sql/prepared';
import { containsPattern } from '../sql/like-pattern';
import { bindTo, keyset, updateColumns } from '../sql/rows';
import { Category } from './category.entity';
import { InventoryItem } from './inventory-item.entity';
import { Pet } from './pet.entity';
import type { PetStatus } from './pet-status';
import { type PetPart, type PetShape, PET_COLUMNS, PET_PARTS, petShape, shapeKey } from './pet-shape';

export interface PetFilter {
  status?: PetStatus | null;
  categoryId?: string | null;
  nameContains?: string | null;
}

/** A row as a shape selects it: id always, the other columns when the shape holds them. */
export interface PetRow {
  id: string;
  name?: string;
  category_id?: string;
  status?: PetStatus;
  c_name?: string;
  c_description?: string | null;
  i_quantity?: number;
  i_status?: PetStatus;
}


/** The SQL of each column a shape may hold. */
const COLUMN_SQL: Partial<Record<PetPart, string>> = {
  name: 'p.name',
  category_id: 'p.category_id',
  status: 'p.status',
  c_name: 'c.name AS c_name',
  c_description: 'c.description AS c_description',
  i_quantity: 'i.quantity AS i_quantity',
  i_status: 'i.status AS i_status',
};

/** A category column read by its own index lookup, for a single pet (its category always exists: a NOT NULL foreign key). */
const CATEGORY_LOOKUP: Partial<Record<PetPart, string>> = {
  c_name: '(SELECT c.name FROM categories c WHERE c.id = p.category_id) AS c_name',
  c_description: '(SELECT c.description FROM categories c WHERE c.id = p.category_id) AS c_description',
};

/**
 * The select list and joins of a shape. `onePet`: the category's columns by lookup rather than a
 * join, whose generic plan hashes every category to find one (about 15% more of PostgreSQL's
 * CPU for a `pet(id)` with its category's name).
 */
function selectFrom(shape: PetShape, onePet = false): string {
  // created_at is not in the schema: parsing it for every row would be wasted work.
  const sqlOf = (part: PetPart) => (onePet && CATEGORY_LOOKUP[part]) || COLUMN_SQL[part];
  const columns = ['p.id', ...PET_PARTS.filter((part) => shape.has(part) && COLUMN_SQL[part]).map(sqlOf)];
  const joins: string[] = [];
  if (shape.has('category') && !onePet) joins.push('JOIN categories c ON c.id = p.category_id');
  if (shape.has('inventory')) joins.push('JOIN inventory_items i ON i.pet_id = p.id');
  return `SELECT ${columns.join(', ')} FROM pets p ${joins.join(' ')}`;
}

/**
 * A page's LIMIT, written into the text: with `LIMIT $n` PostgreSQL costs a generic plan for a
 * tenth of the table, finds it dearer than a plan for the value, and so plans every execution
 * afresh. Page sizes are bounded (MAX_PAGE_SIZE), so the texts are too.
 */
function limitText(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`expected a positive integer LIMIT, got ${limit}`);
  return `LIMIT ${limit}`;
}

/** How many statement names this process gives out; past it, statements run unnamed. */
export const MAX_STATEMENT_NAMES = 500;
const named = new Set<string>();

/**
 * Names are prepared on every connection that runs them and kept there: however many shapes,
 * page sizes and filters clients combine, each connection holds at most MAX_STATEMENT_NAMES.
 * A statement past the bound is planned for each execution: slower, never wrong.
 */
function boundedName(name: string): string {
  if (!name || named.has(name)) return name;
  if (named.size >= MAX_STATEMENT_NAMES) return '';
  named.add(name);
  return name;
}

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
 * A count's name: none for a name search, so that PostgreSQL plans each for its own text (the
 * trigram index, the length index or a scan) rather than once for every text.
 */
const nameOf = (name: string, filterKey: string) => (filterKey.includes('n') ? '' : name);

/**
 * Pets by id. One id by `= $1`, whose generic plan PostgreSQL keeps; `= ANY($1)` only for a real
 * batch (its generic plan is costed for an array of unknown length, so each is planned afresh).
 */
export function petsByIds(ids: readonly string[], shape: PetShape = PET_COLUMNS): Statement {
  const key = shapeKey(shape);
  return ids.length === 1
    ? { name: boundedName(`pet-by-id-${key}`), text: `${selectFrom(shape, true)} WHERE p.id = $1`, values: [ids[0]] }
    : { name: boundedName(`pets-by-ids-${key}`), text: `${selectFrom(shape)} WHERE p.id = ANY($1::bigint[])`, values: [ids] };
}

/** One page, in id order: LIMIT first + 1, the extra row telling that another page follows. */
export function petsPage(filter: PetFilter, page: PageRequest, shape: PetShape = PET_COLUMNS): Statement {
  const values: unknown[] = [];
  const { clauses, key } = whereOf(filter, values);
  const { after, orderBy, limit } = keyset('p.id', page, bindTo(values));
  if (after) clauses.push(after);
  if (after && shape.has('inventory')) {
    // The same cursor on the stock's key: the merge join then starts both scans at the cursor,
    // where it would otherwise read the stock from its first row (PostgreSQL infers equalities, not ranges).
    clauses.push(after.replace('p.id', 'i.pet_id'));
  }
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  return {
    // A filtered page is planned for its values: a generic plan for `status = $1` fitted to the
    // statuses most pets have walks the whole table for one no pet has.
    name: key ? '' : boundedName(`pets-page${page.afterId ? '-a' : ''}-${limit}-${shapeKey(shape)}`),
    text: `${selectFrom(shape)} ${where} ORDER BY ${orderBy} ${limitText(limit)}`,
    values,
  };
}

/**
 * The same page of pets for each of several categories, in one statement. The rows carry
 * category_id whatever `shape` asks: they are grouped by it.
 */
export function petsOfCategoriesPage(categoryIds: readonly string[], page: PageRequest, shape: PetShape = PET_COLUMNS): Statement {
  const values: unknown[] = [categoryIds];
  const withCategory = petShape([...shape, 'category_id']);
  const { after, orderBy, limit } = keyset('p.id', page, bindTo(values));
  const where = ['p.category_id = wanted.id', ...(after ? [after] : [])].join(' AND ');
  return {
    name: boundedName(`pets-of-categories-page${page.afterId ? '-a' : ''}-${limit}-${shapeKey(withCategory)}`),
    text:
      `SELECT page.* FROM unnest($1::bigint[]) AS wanted(id) CROSS JOIN LATERAL ` +
      `(${selectFrom(withCategory)} WHERE ${where} ORDER BY ${orderBy} ${limitText(limit)}) page`,
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
      text: `SELECT count(*)::int AS total FROM (SELECT FROM pets p WHERE ${clauses.join(' AND ')} LIMIT ${bindTo(values)(COUNT_BOUND + 1)}) matches`,
      values,
    };
  }
  const clauses: string[] = [];
  if (filter.status) clauses.push(`status = ${bindTo(values)(filter.status)}`);
  if (filter.categoryId) clauses.push(`category_id = ${bindTo(values)(filter.categoryId)}`);
  return {
    name: `pets-counted-${filter.status ? 's' : ''}${filter.categoryId ? 'c' : ''}`,
    text: `SELECT coalesce(sum(total), 0)::int AS total FROM pet_counts ${clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''}`,
    values,
  };
}

/**
 * The catalogue's size, from the counters, for pricing scans (catalogue-size.ts): a statement of
 * its own, read in the background, apart from any request's `totalCount`.
 */
export const CATALOGUE_SIZE: Statement = {
  name: 'catalogue-size',
  text: 'SELECT coalesce(sum(total), 0)::int AS pets FROM pet_counts',
  values: [],
};

/** The number of pets in each of several categories, from the counters. */
export function petsCountByCategories(categoryIds: readonly string[]): Statement {
  return {
    name: 'pets-counted-by-categories',
    text: 'SELECT category_id, sum(total)::int AS total FROM pet_counts WHERE category_id = ANY($1::bigint[]) GROUP BY category_id',
    values: [categoryIds],
  };
}

/** The columns updatePet sets, as stored: those not given stay as they are. */
export interface PetChanges {
  name?: string;
  category_id?: string;
  status?: PetStatus;
}

/**
 * Sets the given columns of one pet in one statement: no read-then-save, so concurrent updates of
 * different columns all stand. The pets' trigger announces it UPDATED on commit, if it changed.
 */
export function petUpdate(id: string, changes: PetChanges): { text: string; values: unknown[] } {
  return updateColumns('pets', id, { ...changes }, () => 'SELECT id, name, category_id, status FROM changed');
}

/**
 * A count read by petsCount for `filter`: exact from the counters, whatever the total; a
 * substring's count, bounded, is "at least" COUNT_BOUND when it stopped past the bound.
 */
export function countOf(filter: PetFilter, total: number): Count {
  return filter.nameContains && total > COUNT_BOUND ? { total: COUNT_BOUND, exact: false } : { total, exact: true };
}

/** A pet from its row, with the relations its shape joined in attached. */
export function petFromRow(row: PetRow, shape: PetShape = PET_COLUMNS): Pet {
  const pet = new Pet();
  pet.id = row.id;
  if (row.name !== undefined) pet.name = row.name;
  if (row.category_id !== undefined) pet.categoryId = row.category_id;
  if (row.status !== undefined) pet.status = row.status;
  if (shape.has('category')) {
    const category = new Category();
    if (row.category_id !== undefined) category.id = row.category_id;
    if (row.c_name !== undefined) category.name = row.c_name;
    if (row.c_description !== undefined) category.description = row.c_description;
    pet.category = category;
  }
  if (shape.has('inventory')) {
    const inventory = new InventoryItem();
    inventory.petId = row.id;
    if (row.i_quantity !== undefined) inventory.quantity = row.i_quantity;
    if (row.i_status !== undefined) inventory.status = row.i_status;
    pet.inventory = inventory;
  }
  return pet;
}
