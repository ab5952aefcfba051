import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { MAX_OPERATION_LABELS } from '../../src/ops/metrics';
import { startTestApp, type TestApp } from '../helpers/app';

/** Issue 20, finding 7: operation names clients choose cannot crowd real ones out of /metrics. */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const named = (name: string) =>
  request(t.url).post('/graphql').set('X-API-Key', t.adminKey).send({ query: `query ${name} { __typename }` }).expect(200);

/** The operation labels of petstore_http_requests_total, with their counts summed over statuses. */
async function requestCounts(): Promise<Map<string, number>> {
  const { text } = await request(t.url).get('/metrics').expect(200);
  const counts = new Map<string, number>();
  for (const [, operation, count] of text.matchAll(/^petstore_http_requests_total\{surface="graphql",operation="([^"]*)",status="\d+"\} (\d+)$/gm)) {
    counts.set(operation, (counts.get(operation) ?? 0) + Number(count));
  }
  return counts;
}

it('labels a real operation name sent after 300 junk names, keeps a busy one through them, and loses no count', async () => {
  for (let i = 0; i < 5; i += 1) await named('PetCatalogue');
  // Ten at a time: their order among themselves is not what the test is about.
  for (let i = 0; i < 300; i += 10) await Promise.all(Array.from({ length: 10 }, () => named(`Op_${randomBytes(6).toString('hex')}`)));
  await named('PetList');

  const counts = await requestCounts();
  expect(counts.get('PetList')).toBe(1);
  expect(counts.get('PetCatalogue')).toBe(5);
  // Bounded: the kept names, and `other` for what the displaced ones had counted.
  expect(counts.size).toBeLessThanOrEqual(MAX_OPERATION_LABELS + 1);
  expect([...counts.values()].reduce((sum, count) => sum + count, 0)).toBe(306);
});

it('keeps operation names bounded: unnamed operations are `anonymous`, counts of names pushed out `other`', async () => {
  await request(t.url).post('/graphql').set('X-API-Key', t.adminKey).send({ query: '{ pets(first: 1) { totalCount } }' }).expect(200);
  // Ten at a time: the names' order is not what the test is about.
  for (let i = 0; i < 210; i += 10) {
    await Promise.all(
      Array.from({ length: 10 }, (_, j) => request(t.url).post('/graphql').set('X-API-Key', t.adminKey).send({ query: `query Op${i + j} { pets(first: 1) { totalCount } }` })),
    );
  }
  const text = (await request(t.url).get('/metrics')).text;
  const names = new Set([...text.matchAll(/petstore_http_requests_total\{surface="graphql",operation="([^"]+)"/g)].map((m) => m[1]));
  // The 200 busiest names, `anonymous` and `other`.
  expect(names.size).toBeLessThanOrEqual(202);
  expect(names.has('other')).toBe(true);
  expect(names.has('anonymous')).toBe(true);
});
