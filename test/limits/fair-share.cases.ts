import { request as httpRequest } from 'node:http';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { holdPets } from '../helpers/hold';
import { withPostgres } from '../helpers/services';
import { waitFor } from '../helpers/wait';

/**
 * docs/contract.md §5, "Fair share of the database": the pool's connections go to the identities
 * waiting for them by weighted fair queuing, not first come first served. A crowd of anonymous
 * addresses (loopback sources 127.0.0.2 and up, which the gateway rightly takes for distinct
 * clients), each within its own limits, holds every connection and queues far more; a PRO key's
 * request that arrives after all of them is served, never refused (the order itself:
 * test/db/statement-budget.cases.ts).
 */
const ADDRESSES = Array.from({ length: 12 }, (_, i) => `127.0.0.${i + 2}`);
const REQUESTS_PER_ADDRESS = 2;
/** Three pages of pets: three statements that read the table (a status count reads its counters, which no lock holds). */
const CROWD_QUERY = `{ ${['AVAILABLE', 'PENDING', 'SOLD'].map((status, i) => `a${i}: pets(first: 1, filter: { status: ${status} }) { nodes { name } }`).join(' ')} }`;

interface Answer {
  status: number;
  body: { errors?: { message: string; extensions: { code: string } }[] };
  retryAfter?: string;
}

/** POST /graphql from the loopback address `from`. */
function postFrom(t: TestApp, from: string, query: string, key?: string): Promise<Answer> {
  const url = new URL('/graphql', t.url);
  const body = JSON.stringify({ query });
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress: from, headers: { 'Content-Type': 'application/json', ...(key ? { 'X-API-Key': key } : {}) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text), retryAfter: response.headers['retry-after'] }));
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

let t: TestApp;
let petId: string;
beforeAll(async () => {
  t = await startTestApp();
  const category = await createCategory(t);
  petId = await createPet(t, category, 'Rex');
});
afterAll(() => t.close());

it('serves a PRO key’s request that waits behind a crowd of anonymous addresses holding the pool, refusing it nothing, and refuses the crowd naming why, never 500', async () => {
  const turns = t.app.databaseTurns;
  const { key, id: keyId } = await createApiKey(t, { plan: 'PRO' });
  // The key's lookup happens before its identity is known, outside any turn: done once (then cached).
  expect((await postFrom(t, '127.0.0.1', '{ __typename }', key)).status).toBe(200);

  const hold = await holdPets(t);
  const crowd = ADDRESSES.flatMap((address) => Array.from({ length: REQUESTS_PER_ADDRESS }, () => postFrom(t, address, CROWD_QUERY)));
  // Every connection the crowd may take is taken (stuck behind the lock): all but the reserve.
  const crowdHeld = Math.min(turns.unpaidLimit, ADDRESSES.length);
  await waitFor(() => turns.held === crowdHeld, 10_000, 'the crowd to hold the pool');
  const victim = postFrom(t, '127.0.0.1', `{ pet(id: "${petId}") { name category { name } } }`, key);
  // On PostgreSQL it takes a reserved connection at once; on the embedded database's one, it waits.
  const victimKey = `key:${keyId}`;
  await waitFor(() => turns.heldBy(victimKey) + turns.waitingOf(victimKey) === 1, 10_000, 'the key’s statement to take or wait its turn');
  await hold.release();

  const answer = await victim;
  expect(answer.status).toBe(200);
  expect(answer.body.errors).toBeUndefined();

  // The crowd is served its share, or refused naming why (its own statements, its class's bound
  // on the pool, or a pool busy for its priority: it waits no longer than anonymous clients may);
  // never a 500.
  const answers = await Promise.all(crowd);
  for (const { status, body } of answers) {
    expect([200, 429, 503]).toContain(status);
    if (status !== 200) expect(body.errors?.[0].message).toMatch(/own earlier statements|busy with clients of this priority|share|together hold at most \d+ of the database's \d+ connections/);
  }
  expect(answers.some(({ status }) => status === 200)).toBe(true);
  expect(turns.held).toBe(0);
}, 60_000);

withPostgres('the reserve for paying plans', () => {
  it('starts a PRO key’s statement at once while FREE keys hold every connection their class may, and answers it while they wait', async () => {
    const turns = t.app.databaseTurns;
    expect([turns.capacity, turns.unpaidLimit]).toEqual([10, 8]); // 20% of 10 kept
    // As many FREE keys as the pool has connections, one statement each: without the reserve they would hold them all.
    const crowdKeys = await Promise.all(Array.from({ length: turns.capacity }, () => createApiKey(t, { plan: 'FREE' })));
    const { key: proKey } = await createApiKey(t, { plan: 'PRO' });
    // Each key's look-up, outside any turn, done once (then cached).
    for (const { key } of [...crowdKeys, { key: proKey }]) expect((await postFrom(t, '127.0.0.1', '{ __typename }', key)).status).toBe(200);

    const hold = await holdPets(t);
    const crowd = crowdKeys.map(({ key }) => postFrom(t, '127.0.0.1', '{ pets(first: 1) { nodes { name } } }', key));
    await waitFor(() => turns.held === turns.unpaidLimit, 10_000, 'the FREE keys to hold their class’s connections');
    // The PRO key reads what no lock holds: answered while every FREE key's statement still waits on the lock.
    const answer = await postFrom(t, '127.0.0.1', '{ categories(first: 1) { nodes { name } } }', proKey);
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(crowdKeys.reduce((held, { id }) => held + turns.heldBy(`key:${id}`), 0)).toBe(turns.unpaidLimit);

    await hold.release();
    // Those past their class's share are served once the lock goes, or refused naming it if their wait ran out first.
    for (const { status, body } of await Promise.all(crowd)) {
      expect([200, 503]).toContain(status);
      if (status === 503) expect(body.errors?.[0].message).toMatch(/^FREE keys and anonymous clients together hold at most 8 of the database's 10 connections/);
    }
    expect(turns.held).toBe(0);
  }, 60_000);
});
