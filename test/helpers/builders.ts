import { NewApiKeyInput } from '../../src/auth/api-key.inputs';
import type { ApiKeyRole } from '../../src/auth/role';
import type { Plan } from '../../src/auth/plans';
import type { TestApp } from './app';
import { gql } from './gql';

/** Seed builders: they create through the API, as an admin would. */
export async function createCategory(t: TestApp, name = 'Dogs', description?: string): Promise<string> {
  const result = await gql(
    t.url,
    'mutation($input: NewCategory!) { createCategory(input: $input) { id } }',
    { input: { name, description } },
    { key: t.adminKey },
  );
  if (!result.data?.createCategory) throw new Error(JSON.stringify(result.body));
  return result.data.createCategory.id;
}

export async function createPet(
  t: TestApp,
  categoryId: string,
  name = 'Rex',
  status?: 'AVAILABLE' | 'PENDING' | 'SOLD',
): Promise<string> {
  const result = await gql(
    t.url,
    'mutation($input: NewPet!) { createPet(input: $input) { id } }',
    { input: { name, categoryId, status } },
    { key: t.adminKey },
  );
  if (!result.data?.createPet) throw new Error(JSON.stringify(result.body));
  return result.data.createPet.id;
}

/**
 * Issues a key straight through the service: createApiKey itself is limited to 20 a minute, and
 * test/domain/api-keys.cases.ts covers it over HTTP.
 */
export async function createApiKey(
  t: TestApp,
  input: { name?: string; plan?: string; role?: string; requestsPerMinute?: number; requestsPerDay?: number } = {},
): Promise<{ key: string; id: string }> {
  const { key, apiKey } = await t.app.services.apiKeys.create(
    Object.assign(new NewApiKeyInput(), {
      name: input.name ?? 'test client',
      plan: (input.plan ?? 'FREE').toLowerCase() as Plan,
      role: (input.role ?? 'CLIENT').toLowerCase() as ApiKeyRole,
      requestsPerMinute: input.requestsPerMinute ?? null,
      requestsPerDay: input.requestsPerDay ?? null,
    }),
  );
  return { key, id: apiKey.id };
}

export async function setStock(t: TestApp, petId: string, quantity: number): Promise<void> {
  const result = await gql(
    t.url,
    'mutation($petId: ID!, $q: Int!) { updateInventory(petId: $petId, input: { quantity: $q }) { quantity } }',
    { petId, q: quantity },
    { key: t.adminKey },
  );
  if (!result.data?.updateInventory) throw new Error(JSON.stringify(result.body));
}

export const PLACE_ORDER = `mutation($input: NewOrder!, $key: String) {
  placeOrder(input: $input, idempotencyKey: $key) { id petId quantity shipDate complete }
}`;

export function placeOrder(t: TestApp, key: string, petId: string, quantity = 1, idempotencyKey?: string, shipDate?: string) {
  return gql(t.url, PLACE_ORDER, { input: { petId, quantity, shipDate }, key: idempotencyKey }, { key });
}

/** A category with one AVAILABLE pet holding `stock` units. */
export async function stockedPet(t: TestApp, stock: number, name = 'Rex'): Promise<string> {
  const petId = await createPet(t, await createCategory(t, `${name}'s kind`), name);
  await setStock(t, petId, stock);
  return petId;
}

/** A pet's stock as clients read it. */
export async function stockOf(t: TestApp, petId: string) {
  return (await gql(t.url, 'query($id: ID!) { inventoryItem(petId: $id) { quantity status } }', { id: petId })).data?.inventoryItem;
}

/** The orders stored for a pet, counted in the database itself. */
export async function ordersFor(t: TestApp, petId: string): Promise<number> {
  return (await t.db.dataSource.query('SELECT count(*)::int AS n FROM orders WHERE pet_id = $1', [petId]))[0].n;
}
