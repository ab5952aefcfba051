/** Orders loaded beside the pets: past the bound substring counts stop at. */
export const CATALOGUE_ORDERS = 10_200;
const CATEGORIES = 7;
/**
 * Rows written by one statement: each row's trigger announces it (migration ChangeTriggers), and a
 * statement of the whole catalogue would outlast the test database's statement timeout.
 */
const LOAD_CHUNK = 10_000;

/**
 * Categories, pets in uneven numbers by category and status (the last category has none), orders of the buyers (a third of
 * them complete), and a stock row for every pet whose status follows from its quantity and open
 * orders as the database derives it. Returns the categories' ids.
 */
export async function loadCatalogue(query: <T>(sql: string, values?: unknown[]) => Promise<T[]>, pets: number, buyerIds: string[]): Promise<string[]> {
  const categories = (await query<{ id: string }>(`INSERT INTO categories (name) SELECT 'Kind ' || i FROM generate_series(1, ${CATEGORIES}) i RETURNING id`)).map((row) => row.id);
  for (let first = 1; first <= pets; first += LOAD_CHUNK) {
    await query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'Pet ' || i, ($1::bigint[])[1 + (i % ${CATEGORIES - 1} + i % 4) % ${CATEGORIES - 1}], (ARRAY['available', 'available', 'pending', 'sold']::pet_status[])[1 + (i / 3) % 4]
         FROM generate_series($2::int, $3::int) i`,
      [categories, first, Math.min(first + LOAD_CHUNK - 1, pets)],
    );
  }
  await query(
    `INSERT INTO orders (pet_id, quantity, complete, api_key_id)
     SELECT p.id, 1, p.id % 3 = 0, ($1::bigint[])[1 + p.id % ${buyerIds.length}] FROM pets p ORDER BY p.id LIMIT ${CATALOGUE_ORDERS}`,
    [buyerIds],
  );
  for (let offset = 0; offset < pets; offset += LOAD_CHUNK) {
    await query(
      `INSERT INTO inventory_items (pet_id, quantity, status)
       SELECT p.id, p.id % 5, stock_status((p.id % 5)::int, EXISTS (SELECT 1 FROM orders o WHERE o.pet_id = p.id AND NOT o.complete))
         FROM (SELECT id FROM pets ORDER BY id OFFSET $1 LIMIT $2) p`,
      [offset, LOAD_CHUNK],
    );
  }
  await query('ANALYZE');
  return categories;
}
