import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, placeOrder, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';

// docs/contract.md §3: every mutation result is nullable, so one refused alias never hides the
// others' results (a non-null result would null the whole `data`).
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const aliased = (count: number, field: (i: number) => string) =>
  `mutation { ${Array.from({ length: count }, (_, i) => field(i)).join(' ')} }`;

describe('a document with several mutation fields', () => {
  it('answers the 10 orders placed among 15 aliased placeOrder, and RATE_LIMITED for the others', async () => {
    const petId = await stockedPet(t, 100);
    const { key } = await createApiKey(t, { plan: 'PRO' });
    const result = await gql(
      t.url,
      aliased(15, (i) => `o${i}: placeOrder(input: { petId: "${petId}", quantity: 1 }) { id }`),
      undefined,
      { key },
    );
    expect(result.status).toBe(200);
    const placed = Object.values(result.data ?? {}).filter((order) => order !== null);
    expect(placed).toHaveLength(10);
    expect(placed.every((order: { id: string }) => /^\d+$/.test(order.id))).toBe(true);
    expect(result.errors?.map((error) => error.extensions.code)).toEqual(Array(5).fill('RATE_LIMITED'));
  });

  it('delivers the secrets of the 20 keys created among 25 aliased createApiKey', async () => {
    const { key: admin } = await createApiKey(t, { role: 'ADMIN', plan: 'BUSINESS' });
    const result = await gql(
      t.url,
      aliased(25, (i) => `k${i}: createApiKey(input: { name: "k${i}", plan: FREE }) { key apiKey { id } }`),
      undefined,
      { key: admin },
    );
    const issued = Object.values(result.data ?? {}).filter((issuedKey) => issuedKey !== null);
    expect(issued).toHaveLength(20);
    for (const { key } of issued as { key: string }[]) {
      expect((await gql(t.url, '{ rateLimit { plan } }', undefined, { key })).data?.rateLimit.plan).toBe('FREE');
    }
    expect(result.errors?.map((error) => error.extensions.code)).toEqual(Array(5).fill('RATE_LIMITED'));
  });

  it("returns the id of one's own cancelled order beside NOT_FOUND for another's", async () => {
    const petId = await stockedPet(t, 5);
    const alice = (await createApiKey(t)).key;
    const bob = (await createApiKey(t)).key;
    const own = (await placeOrder(t, alice, petId)).data?.placeOrder.id as string;
    const others = (await placeOrder(t, bob, petId)).data?.placeOrder.id as string;
    const result = await gql(t.url, `mutation { a: cancelOrder(id: "${own}") b: cancelOrder(id: "${others}") }`, undefined, {
      key: alice,
    });
    expect(result.data).toEqual({ a: own, b: null });
    expect(result.errors).toMatchObject([{ path: ['b'], extensions: { code: 'NOT_FOUND', status: 404 } }]);
  });
});
