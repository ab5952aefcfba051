import { performance } from 'node:perf_hooks';
import request from 'supertest';
import { COST, substringCost } from '../../src/common/query-cost';
import { PLAN_LIMITS, Plan } from '../../src/auth/plans';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory } from '../helpers/builders';
import { printFigure } from '../helpers/figures';

/**
 * Issue 12's and 20's goal: a client running the costliest attack the cost limit admits, with as
 * many requests in flight as it may have, does not starve another client of the database.
 * On PostgreSQL (DATABASE_URL) with 10,000 pets, as the issue measured; embedded, with 200:
 * PGlite serves one statement at a time on this process's thread, so every scan delays everyone.
 */
const PETS = process.env.DATABASE_URL ? 10_000 : 200;
/** Seconds under attack, in one-second turns, each after half a second of the victim alone. */
const SECONDS = 2;
/*
 * The goal's figure (the victim's p99 under 50 ms) is the bench's to measure (`attack` and
 * `keyed-attack` in npm run bench): here the victim, the attacker and the server share one
 * thread and a machine running other test files, so a latency bound would measure those. This
 * test pins what must hold however loaded the machine: the victim is always served, nothing is
 * ever a 503, and the admitted attack is served too (the refused one never).
 */
const IN_FLIGHT = PLAN_LIMITS[Plan.FREE].requestsInFlight;

const attack = (aliases: number) =>
  `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: pets(first: 1, filter: { nameContains: "${twoLetters(i)}" }) { totalCount }`).join(' ')} }`;
/** A two-letter text of its own for each alias: shorter than a trigram, so each count scans. */
const twoLetters = (i: number) => String.fromCharCode(97 + (i % 26), 97 + (Math.floor(i / 26) % 26));
/** Issue 20's: every alias searching for 100 underscores, which hold no trigram for the index to search by. */
const underscoreAttack = (aliases: number) =>
  `query($s: String) { ${Array.from({ length: aliases }, (_, i) => `a${i}: pets(first: 1, filter: { nameContains: $s }) { totalCount }`).join(' ')} }`;
const UNDERSCORES = { s: '_'.repeat(100) };
/** The most aliases of the attack the cost limit admits over PETS pets (10,000: 1,000 / 77 = 12; 200: 1,000 / 14 = 71). */
const MOST_ALIASES = Math.floor(1000 / (COST.CONNECTION + COST.COUNT + substringCost(PETS, false)));

let t: TestApp;
let petIds: string[];
beforeAll(async () => {
  t = await startTestApp();
  const categoryId = await createCategory(t);
  const rows: { id: string }[] = await t.db.dataSource.query(
    `INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, $2, 'available' FROM generate_series(1, $1) AS i RETURNING id`,
    [PETS, categoryId],
  );
  await t.db.dataSource.query(`INSERT INTO inventory_items (pet_id, quantity, status) SELECT id, 10, 'available' FROM pets`);
  await t.db.dataSource.query('ANALYZE pets');
  // Priced from now on by the catalogue just loaded, not the empty one the gateway started on.
  await t.app.services.database.catalogueSize.refresh();
  petIds = rows.map((row) => row.id);
}, 60_000);
afterAll(() => t.close());

/** Another client reading one pet at a time until `until`, after `delayMs`. */
async function victim(until: number, delayMs = 0): Promise<{ latencies: number[]; statuses: number[] }> {
  const latencies: number[] = [];
  const statuses: number[] = [];
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  for (let i = 0; performance.now() < until; i += 1) {
    const started = performance.now();
    const response = await request(t.url)
      .post('/graphql')
      .set('X-API-Key', t.adminKey)
      .send({ query: `{ pet(id: "${petIds[(i * 7919) % petIds.length]}") { id name } }` });
    latencies.push(performance.now() - started);
    statuses.push(response.status);
  }
  return { latencies, statuses };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

it('refuses issue 12’s original query (500 aliases) with 400 QUERY_TOO_COMPLEX', async () => {
  const response = await request(t.url).post('/graphql').send({ query: attack(500) });
  expect(response.status).toBe(400);
  expect(response.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
});

interface Attack {
  query: string;
  variables?: Record<string, string>;
  /** The attacker's key, if any, and how many requests it keeps in flight. */
  key?: () => Promise<string>;
  inFlight: number;
  /** How many aliases: the most admitted are served, more are refused. */
  aliases: number;
}

// The original last: once its refusals spend the quota the address is banned.
it.each<[string, Attack]>([
  [`an anonymous client keeps ${IN_FLIGHT} of the costliest admitted attack (${MOST_ALIASES} aliases)`, { query: attack(MOST_ALIASES), inFlight: IN_FLIGHT, aliases: MOST_ALIASES }],
  [
    `a BUSINESS key keeps ${PLAN_LIMITS[Plan.BUSINESS].requestsInFlight} of issue 20’s (${MOST_ALIASES} aliases searching for 100 underscores)`,
    {
      query: underscoreAttack(MOST_ALIASES),
      variables: UNDERSCORES,
      key: async () => (await createApiKey(t, { plan: 'BUSINESS' })).key,
      inFlight: PLAN_LIMITS[Plan.BUSINESS].requestsInFlight,
      aliases: MOST_ALIASES,
    },
  ],
  [`an anonymous client keeps ${IN_FLIGHT} of issue 12’s original query (500 aliases, refused)`, { query: attack(500), inFlight: IN_FLIGHT, aliases: 500 }],
])("serves another client's every pet(id), with no 503 anywhere, while %s in flight", async (_name, { query, variables, key: keyOf, inFlight, aliases }) => {
  const key = await keyOf?.();
  const attackStatuses: number[] = [];
  const attacker = async (until: number) => {
    while (performance.now() < until) {
      const call = request(t.url).post('/graphql');
      if (key) call.set('X-API-Key', key);
      const response = await call.send({ query, variables });
      attackStatuses.push(response.status);
      // Refused: pause a little before sending again. The attacker shares this process's one
      // thread with the server and the victim; spinning on instant refusals would measure that.
      if (response.status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  // The victim alone and under attack in turns, so that both see the same machine.
  const victimAlone = { latencies: [] as number[], statuses: [] as number[] };
  const victimLatencies: number[] = [];
  const victimStatuses: number[] = [];
  for (let turn = 0; turn < SECONDS; turn += 1) {
    const alone = await victim(performance.now() + 500);
    victimAlone.latencies.push(...alone.latencies);
    victimAlone.statuses.push(...alone.statuses);
    // The attack starts first; the victim follows 100 ms later.
    const until = performance.now() + 1000;
    const [underAttack] = await Promise.all([victim(until, 100), ...Array.from({ length: inFlight }, () => attacker(until))]);
    victimLatencies.push(...underAttack.latencies);
    victimStatuses.push(...underAttack.statuses);
  }

  const sorted = [...victimLatencies].sort((a, b) => a - b);
  const alone = percentile([...victimAlone.latencies].sort((a, b) => a - b), 95);
  const served = attackStatuses.filter((status) => status === 200).length;
  const byStatus = [...new Set(attackStatuses)].sort().map((status) => `${status}×${attackStatuses.filter((s) => s === status).length}`);
  printFigure(
    `${PETS} pets, ${aliases}-alias attack${key ? ' with a BUSINESS key' : ''} at ${inFlight} in flight for ${SECONDS} s: attack answered ${byStatus.join(', ')}; ` +
      `victim alone p95 ${alone.toFixed(1)} ms; under attack ${sorted.length} requests, p50 ${percentile(sorted, 50).toFixed(1)} ms, ` +
      `p95 ${percentile(sorted, 95).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, ` +
      `${[...victimStatuses, ...attackStatuses].filter((status) => status === 503).length} × 503`,
  );
  if (aliases <= MOST_ALIASES) expect(served).toBeGreaterThan(0);
  else expect(served).toBe(0);
  expect(victimStatuses.every((status) => status === 200)).toBe(true);
  expect(attackStatuses.filter((status) => status === 503)).toEqual([]);
  expect(victimAlone.statuses.every((status) => status === 200)).toBe(true);
}, 30_000);
