import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory } from '../helpers/builders';
import { gql } from '../helpers/gql';

/**
 * An update writes only the fields it is given, from the row as it is when written: concurrent
 * updates of different fields of one row all stand (no update is lost to a stale read).
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { limitInFlight: false });
});
afterAll(() => t.close());

const admin = () => ({ key: t.adminKey });
const query = <T>(sql: string, values?: unknown[]): Promise<T[]> => t.db.dataSource.query(sql, values);
const PAIRS = 60;

const UPDATE_PET = 'mutation($id: ID!, $input: PetUpdate!) { updatePet(id: $id, input: $input) { id } }';
const UPDATE_CATEGORY = 'mutation($id: ID!, $input: CategoryUpdate!) { updateCategory(id: $id, input: $input) { id } }';

/** Sends every mutation at once; each must succeed. */
async function allAtOnce(calls: [document: string, variables: Record<string, unknown>][]): Promise<void> {
  const results = await Promise.all(calls.map(([document, variables]) => gql(t.url, document, variables, admin())));
  expect(results.filter((result) => result.errors || result.status !== 200)).toEqual([]);
}

it(`keeps both of ${PAIRS} concurrent pairs of updatePet { name } and updatePet { status }, in two rounds`, async () => {
  const categoryId = await createCategory(t, 'Racers');
  const ids = (
    await query<{ id: string }>(
      `WITH made AS (INSERT INTO pets (name, category_id) SELECT 'Racer ' || i, $1 FROM generate_series(1, ${PAIRS}) i RETURNING id),
            stock AS (INSERT INTO inventory_items (pet_id) SELECT id FROM made)
       SELECT id FROM made ORDER BY id`,
      [categoryId],
    )
  ).map((row) => row.id);
  for (const [round, status] of [[1, 'SOLD'], [2, 'PENDING']] as const) {
    await allAtOnce(ids.flatMap((id) => [[UPDATE_PET, { id, input: { name: `Round ${round} ${id}` } }], [UPDATE_PET, { id, input: { status } }]]));
    const pets = await query<{ id: string; name: string; status: string }>('SELECT id, name, status::text FROM pets WHERE id = ANY($1::bigint[]) ORDER BY id', [ids]);
    expect(pets).toEqual(ids.map((id) => ({ id, name: `Round ${round} ${id}`, status: status.toLowerCase() })));
  }
});

it('keeps both of concurrent updateCategory { name } and updateCategory { description }', async () => {
  const ids = (
    await query<{ id: string }>(`INSERT INTO categories (name) SELECT 'Kind ' || i FROM generate_series(1, ${PAIRS}) i RETURNING id`)
  ).map((row) => row.id);
  await allAtOnce(ids.flatMap((id) => [[UPDATE_CATEGORY, { id, input: { name: `Renamed ${id}` } }], [UPDATE_CATEGORY, { id, input: { description: `About ${id}` } }]]));
  const categories = await query<{ id: string; name: string; description: string }>('SELECT id, name, description FROM categories WHERE id = ANY($1::bigint[]) ORDER BY id', [ids]);
  expect(categories).toEqual(ids.map((id) => ({ id, name: `Renamed ${id}`, description: `About ${id}` })));
});

it('answers an update with no fields with the pet or category as it is', async () => {
  const categoryId = await createCategory(t, 'Still', 'Unchanged');
  const [{ id }] = await query<{ id: string }>(`INSERT INTO pets (name, category_id, status) VALUES ('Stay', $1, 'pending') RETURNING id`, [categoryId]);
  const pet = await gql(t.url, 'mutation($id: ID!) { updatePet(id: $id, input: {}) { id name categoryId status } }', { id }, admin());
  expect(pet.data?.updatePet).toEqual({ id, name: 'Stay', categoryId, status: 'PENDING' });
  const category = await gql(t.url, 'mutation($id: ID!) { updateCategory(id: $id, input: {}) { id name description } }', { id: categoryId }, admin());
  expect(category.data?.updateCategory).toEqual({ id: categoryId, name: 'Still', description: 'Unchanged' });
});
