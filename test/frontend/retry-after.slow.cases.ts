import { PLAN_LIMITS, Plan } from '../../src/auth/plans';
import { startTestApp, type TestApp, DATABASE_BOUND } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { metric } from '../helpers/metrics';
import { waitFor } from '../helpers/wait';
import { corpusOperation } from './corpus';
import { bodyOnItsWay, pageClient, type Tally } from './page-client';

/**
 * A page whose request waited for a slot until its wait ran out (page-load.cases.ts has the
 * page's loads and bursts): refused 429, then sent again by the guide's RetryLink once its
 * Retry-After has passed. It waits the admission's own wait and the Retry-After: seconds.
 */
const max = PLAN_LIMITS[Plan.FREE].requestsInFlight;
let t: TestApp;
let petId: string;
beforeAll(async () => {
  t = await startTestApp(DATABASE_BOUND);
  petId = await createPet(t, await createCategory(t, 'Dogs'), 'Rex');
});
afterAll(() => t.close());

it('retries a request refused when its wait for a slot ran out, once Retry-After has passed, through the guide’s RetryLink', async () => {
  const { key } = await createApiKey(t, { plan: 'FREE' });
  // Every slot of the key held by a request whose body is still on its way: the next one waits for a slot until its wait runs out.
  const held = Array.from({ length: max }, () => bodyOnItsWay(t.url, key));
  await waitFor(async () => (await metric(t, 'petstore_requests_in_flight', { state: 'running' })) >= max, 10_000, 'every slot taken');

  const tally: Tally = { statuses: [] };
  let refused: () => void = () => {};
  const firstRefusal = new Promise<void>((resolve) => (refused = resolve));
  const late = pageClient(t.url, tally, key, (status) => status === 429 && refused());
  const answer = late.query({ query: corpusOperation('PetDetail'), variables: { id: petId }, fetchPolicy: 'network-only' });
  await firstRefusal;
  held.forEach((request) => request.destroy());

  expect((await answer).error).toBeUndefined();
  expect(tally.statuses[0]).toBe(429);
  expect(tally.statuses.at(-1)).toBe(200);
});
