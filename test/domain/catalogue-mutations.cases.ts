import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const admin = () => ({ key: t.adminKey });

describe('createPet', () => {
  it('creates a trimmed pet, AVAILABLE by default, with 0 units of stock that are SOLD', async () => {
    const categoryId = await createCategory(t, 'Dogs');
    const result = await gql(
      t.url,
      'mutation($input: NewPet!) { createPet(input: $input) { id name categoryId status inventory { quantity status } } }',
      { input: { name: '  Rex  ', categoryId } },
      admin(),
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.createPet).toMatchObject({ name: 'Rex', categoryId, status: 'AVAILABLE', inventory: { quantity: 0, status: 'SOLD' } });
  });

  it('keeps the status its creator sets', async () => {
    const categoryId = await createCategory(t);
    const result = await gql(t.url, 'mutation($input: NewPet!) { createPet(input: $input) { status } }', { input: { name: 'Bo', categoryId, status: 'PENDING' } }, admin());
    expect(result.data?.createPet.status).toBe('PENDING');
  });

  it.each([
    ['an empty name', ''],
    ['a blank name', '   '],
    ['a 101-character name', 'x'.repeat(101)],
  ])('refuses %s with BAD_USER_INPUT and creates nothing', async (_label, name) => {
    const categoryId = await createCategory(t, 'Bounds');
    const result = await gql(t.url, 'mutation($input: NewPet!) { createPet(input: $input) { id } }', { input: { name, categoryId } }, admin());
    expect(result.status).toBe(200);
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    expect(result.errors?.[0]).toMatchObject({ message: 'name must be 1 to 100 characters after trimming', extensions: { status: 400 } });
    const pets = await gql(t.url, 'query($c: ID) { pets(filter: { categoryId: $c }) { totalCount } }', { c: categoryId });
    expect(pets.data?.pets.totalCount).toBe(0);
  });

  it('accepts a name of exactly 100 characters', async () => {
    const categoryId = await createCategory(t);
    const result = await gql(t.url, 'mutation($input: NewPet!) { createPet(input: $input) { name } }', { input: { name: 'y'.repeat(100), categoryId } }, admin());
    expect(result.data?.createPet.name).toHaveLength(100);
  });

  it('refuses an unknown category with NOT_FOUND', async () => {
    const result = await gql(t.url, 'mutation { createPet(input: { name: "Ghost", categoryId: "987654" }) { id } }', undefined, admin());
    expect(codes(result)).toEqual(['NOT_FOUND']);
    expect(result.errors?.[0]).toMatchObject({ message: 'Category 987654 not found', extensions: { status: 404 } });
  });
});

describe('updatePet', () => {
  it('changes only the fields given', async () => {
    const dogs = await createCategory(t, 'Dogs');
    const cats = await createCategory(t, 'Cats');
    const id = await createPet(t, dogs, 'Rex');
    const renamed = await gql(t.url, `mutation { updatePet(id: "${id}", input: { name: " Rexy " }) { name categoryId status } }`, undefined, admin());
    expect(renamed.data?.updatePet).toEqual({ name: 'Rexy', categoryId: dogs, status: 'AVAILABLE' });
    const moved = await gql(t.url, `mutation { updatePet(id: "${id}", input: { categoryId: "${cats}", status: SOLD }) { name categoryId status } }`, undefined, admin());
    expect(moved.data?.updatePet).toEqual({ name: 'Rexy', categoryId: cats, status: 'SOLD' });
  });

  it('refuses null for a field that cannot be cleared', async () => {
    const id = await createPet(t, await createCategory(t));
    const result = await gql(t.url, `mutation { updatePet(id: "${id}", input: { name: null }) { name } }`, undefined, admin());
    expect(codes(result)).toEqual(['BAD_USER_INPUT']);
    const status = await gql(t.url, `mutation { updatePet(id: "${id}", input: { status: null }) { name } }`, undefined, admin());
    expect(status.errors?.[0]).toMatchObject({ message: 'status cannot be null', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('gives NOT_FOUND for an unknown pet or category', async () => {
    const unknownPet = await gql(t.url, 'mutation { updatePet(id: "55555", input: { name: "X" }) { id } }', undefined, admin());
    expect(codes(unknownPet)).toEqual(['NOT_FOUND']);
    const id = await createPet(t, await createCategory(t));
    const unknownCategory = await gql(t.url, `mutation { updatePet(id: "${id}", input: { categoryId: "55555" }) { id } }`, undefined, admin());
    expect(codes(unknownCategory)).toEqual(['NOT_FOUND']);
  });
});

describe('deletePet', () => {
  it('removes the pet and its stock and returns the id', async () => {
    const id = await createPet(t, await createCategory(t));
    const result = await gql(t.url, `mutation { deletePet(id: "${id}") }`, undefined, admin());
    expect(result.data).toEqual({ deletePet: id });
    const after = await gql(t.url, `{ pet(id: "${id}") { id } }`);
    expect(after.data).toEqual({ pet: null });
    const stock = await t.db.dataSource.query('SELECT count(*)::int AS n FROM inventory_items WHERE pet_id = $1', [id]);
    expect(stock[0].n).toBe(0);
  });

  it('gives NOT_FOUND for an unknown pet', async () => {
    const result = await gql(t.url, 'mutation { deletePet(id: "77777") }', undefined, admin());
    expect(codes(result)).toEqual(['NOT_FOUND']);
  });

  it('refuses with PET_HAS_ORDERS while an order names the pet, losing nothing', async () => {
    const id = await createPet(t, await createCategory(t));
    const [{ id: keyId }] = await t.db.dataSource.query('SELECT id FROM api_keys WHERE from_environment');
    await t.db.dataSource.query('INSERT INTO orders (pet_id, quantity, complete, api_key_id) VALUES ($1, 1, true, $2)', [id, keyId]);
    const result = await gql(t.url, `mutation { deletePet(id: "${id}") }`, undefined, admin());
    expect(codes(result)).toEqual(['PET_HAS_ORDERS']);
    expect(result.errors?.[0].extensions.status).toBe(409);
    const after = await gql(t.url, `{ pet(id: "${id}") { id inventory { quantity } } }`);
    expect(after.data?.pet).toEqual({ id, inventory: { quantity: 0 } });
  });
});

describe('categories', () => {
  it('creates, updates and deletes a category', async () => {
    const created = await gql(t.url, 'mutation { createCategory(input: { name: " Birds ", description: " Songbirds " }) { id name description } }', undefined, admin());
    const { id } = created.data!.createCategory;
    expect(created.data?.createCategory).toEqual({ id, name: 'Birds', description: 'Songbirds' });
    const updated = await gql(t.url, `mutation { updateCategory(id: "${id}", input: { description: null }) { name description } }`, undefined, admin());
    expect(updated.data?.updateCategory).toEqual({ name: 'Birds', description: null });
    const renamed = await gql(t.url, `mutation { updateCategory(id: "${id}", input: { name: "Parrots" }) { name description } }`, undefined, admin());
    expect(renamed.data?.updateCategory).toEqual({ name: 'Parrots', description: null });
    const deleted = await gql(t.url, `mutation { deleteCategory(id: "${id}") }`, undefined, admin());
    expect(deleted.data).toEqual({ deleteCategory: id });
    expect((await gql(t.url, `{ category(id: "${id}") { id } }`)).data).toEqual({ category: null });
  });

  it('bounds names and descriptions', async () => {
    const longDescription = await gql(t.url, 'mutation($d: String) { createCategory(input: { name: "A", description: $d }) { id } }', { d: 'd'.repeat(501) }, admin());
    expect(longDescription.errors?.[0]).toMatchObject({ message: 'description must be 0 to 500 characters after trimming', extensions: { code: 'BAD_USER_INPUT' } });
    const okDescription = await gql(t.url, 'mutation($d: String) { createCategory(input: { name: "A", description: $d }) { description } }', { d: 'd'.repeat(500) }, admin());
    expect(okDescription.data?.createCategory.description).toHaveLength(500);
    const noName = await gql(t.url, 'mutation { createCategory(input: { name: "" }) { id } }', undefined, admin());
    expect(codes(noName)).toEqual(['BAD_USER_INPUT']);
  });

  it('refuses to delete a category that has pets with CATEGORY_NOT_EMPTY', async () => {
    const id = await createCategory(t, 'Full');
    const petId = await createPet(t, id);
    const result = await gql(t.url, `mutation { deleteCategory(id: "${id}") }`, undefined, admin());
    expect(codes(result)).toEqual(['CATEGORY_NOT_EMPTY']);
    expect(result.errors?.[0].extensions.status).toBe(409);
    expect((await gql(t.url, `{ pet(id: "${petId}") { categoryId } }`)).data?.pet.categoryId).toBe(id);
  });

  it('gives NOT_FOUND when updating or deleting an unknown category', async () => {
    expect(codes(await gql(t.url, 'mutation { updateCategory(id: "8888", input: { name: "X" }) { id } }', undefined, admin()))).toEqual(['NOT_FOUND']);
    expect(codes(await gql(t.url, 'mutation { deleteCategory(id: "8888") }', undefined, admin()))).toEqual(['NOT_FOUND']);
  });
});
