import request from 'supertest';
import { startTestApp, type TestApp, DATABASE_BOUND } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';

/** A page of pets: one statement each, charged to the unpaid classes' database time. */
const PAGE = '{ pets(first: 5) { nodes { name } } }';

/** The unpaid classes' database time (docs/contract.md §5, "Database time of the unpaid classes"). */
describe('the unpaid classes’ database time', () => {
  let t: TestApp;
  beforeAll(async () => {
    // 2 ms of statement time a second for FREE keys and anonymous clients together, 1 for anonymous
    // clients: the first statements spend it, and what they overdraw takes a while to pay back.
    t = await startTestApp({ UNPAID_DATABASE_MS_PER_SECOND: '2', ...DATABASE_BOUND });
    const categoryId = await createCategory(t);
    for (let i = 0; i < 5; i += 1) await createPet(t, categoryId, `Pet ${i}`);
  });
  afterAll(() => t.close());

  it('sheds anonymous requests with 503 and Retry-After once it is spent, and serves a paying key meanwhile', async () => {
    const { key } = await createApiKey(t, { plan: 'PRO' });
    let shed: request.Response | undefined;
    // Each served page spends some of the class's millisecond a second; one past it is shed.
    for (let sent = 0; sent < 50 && !shed; sent += 1) {
      const answer = await request(t.url).post('/graphql').send({ query: PAGE });
      if (answer.body.errors) shed = answer;
      else expect(answer.status).toBe(200);
    }
    expect(shed).toBeDefined();
    expect(shed!.status).toBe(503);
    expect(Number(shed!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(shed!.body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    expect(shed!.body.errors[0].message).toMatch(/^Anonymous clients together use at most 1 ms of database time a second on this instance, and that is spent for now; retry in \d+ s$/);

    const paying = await request(t.url).post('/graphql').set('X-API-Key', key).send({ query: PAGE });
    expect(paying.status).toBe(200);
    expect(paying.body.errors).toBeUndefined();
    expect(paying.body.data.pets.nodes).toHaveLength(5);
  });
});
