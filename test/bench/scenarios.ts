import { ATTACK_KEY, BENCH_KEY, ORDER_KEYS, PETS, orderKey } from './fixture';

/**
 * How a contender is asked: the gateway's GraphQL by POST, or by GET (`gateway GET`, the query in
 * the URL, as a shared cache sees it), the raw servers' POST and GET, PostGraphile's schema.
 */
export type Target = 'raw' | 'raw GET' | 'gateway' | 'gateway GET' | 'postgraphile';

export interface BenchRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Scenario {
  name: string;
  /** The request number `n` of a run, for the given contender. */
  request(target: Target, n: number): BenchRequest;
  /** A response that does not pass is counted as a mismatch: speed only counts when answers are right. */
  verify(body: string): boolean;
  /** Whether the load counts the answers' `X-Cache` (HIT, MISS, BYPASS, or none). */
  countsCache?: boolean;
  /** This many requests, numbered from 0, then the load stops: its time is not what is measured. */
  requests?: number;
}

const randomPetId = () => String(1 + Math.floor(Math.random() * PETS));
/** BENCH_HOT_PETS: the ids 1..N that the `cached` and `mixed` scenarios read (default 100), few enough to stay cached. */
export const HOT_PETS = Number(process.env.BENCH_HOT_PETS ?? 100);
export const randomHotPetId = () => String(1 + Math.floor(Math.random() * HOT_PETS));

const graphql = (key: string, query: string, operationName?: string, variables?: Record<string, string>): BenchRequest => ({
  method: 'POST',
  path: '/graphql',
  headers: { 'content-type': 'application/json', 'x-api-key': key },
  body: JSON.stringify({ query, operationName, variables }),
});

const Q1 = 'query Q1($id: ID!) { pet(id: $id) { id name category { name } } }';

/**
 * The database-starving query of issue 12: aliases of a substring-filtered count, each alias a
 * page and a COUNT scanning every pet. ATTACK_ALIASES sets how many (default 500, the most the
 * first cost model admitted); no key, so it runs as an anonymous client.
 */
export const attackQuery = (aliases: number) =>
  `{${Array.from({ length: aliases }, (_, i) => ` a${i}: pets(first: 1, filter: { nameContains: "q${i}" }) { totalCount }`).join('')} }`;
const ATTACK = attackQuery(Number(process.env.ATTACK_ALIASES ?? 500));
const Q2 = 'query Q2 { pets(first: 50) { nodes { id name status category { id name } inventory { quantity } } } }';
// The same questions in PostGraphile's generated schema (Amber preset: `rowId` is the primary key).
const PEER_Q1 = 'query Q1($id: BigInt!) { petByRowId(rowId: $id) { rowId name categoryByCategoryId { name } } }';
const PEER_Q2 =
  'query Q2 { allPets(first: 50, orderBy: PRIMARY_KEY_ASC) { nodes { rowId name status categoryByCategoryId { rowId name } inventoryItemByPetId { quantity } } } }';
const get = (path: string): BenchRequest => ({ method: 'GET', path, headers: {} });
// GraphQL over GET: the key's header is also what lets it past the CSRF check of a GET.
const Q1_GET = `/graphql?operationName=Q1&query=${encodeURIComponent(Q1)}&variables=`;
const Q2_GET = `/graphql?operationName=Q2&query=${encodeURIComponent(Q2)}`;
const graphqlGet = (path: string): BenchRequest => ({ method: 'GET', path, headers: { 'x-api-key': BENCH_KEY } });

export function q1Request(target: Target, id: string): BenchRequest {
  if (target === 'raw GET') return get(`/pet/${id}`);
  if (target === 'gateway GET') return graphqlGet(Q1_GET + encodeURIComponent(JSON.stringify({ id })));
  return target === 'postgraphile' ? graphql(BENCH_KEY, PEER_Q1, 'Q1', { id }) : graphql(BENCH_KEY, Q1, 'Q1', { id });
}

export function q2Request(target: Target): BenchRequest {
  if (target === 'raw GET') return get('/pets50');
  if (target === 'gateway GET') return graphqlGet(Q2_GET);
  return target === 'postgraphile' ? graphql(BENCH_KEY, PEER_Q2, 'Q2') : graphql(BENCH_KEY, Q2, 'Q2');
}
/**
 * Issue 20's keyed attack: 16 aliases of a filtered count, the most the cost limit admits, the
 * text 100 underscores (LIKE wildcards, were they not escaped), sent with a BUSINESS key.
 */
// As many aliases as the cost limit admits: one, now that a search no index serves is priced as the scan it is.
const KEYED_ATTACK = `query Attack($s: String) {${Array.from({ length: 1 }, (_, i) => ` a${i}: pets(first: 1, filter: { nameContains: $s }) { totalCount }`).join('')} }`;
const UNDERSCORES = '_'.repeat(100);
const INNOCENT = 'query Innocent($id: ID!) { pet(id: $id) { name } }';
/**
 * Anonymous visitors, each request from an address of its own (X-Forwarded-For, the gateway
 * trusting one proxy): what one anonymous client sees of the gateway, without its 60 a minute.
 */
const visitor = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

const PLACE = 'mutation PlaceOrder($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 1 }) { id } }';

export const SCENARIOS: Record<string, Scenario> = {
  Q1: {
    name: 'Q1: pet(id) with its category name',
    request: (target) => q1Request(target, randomPetId()),
    verify: (body) => /^\{("data":\{"(pet|petByRowId)":\{)?"(id|rowId)":/.test(body),
  },
  Q2: {
    name: 'Q2: 50 pets with category and stock',
    request: (target) => q2Request(target),
    verify: (body) => /^(\[\{|\{"data":\{"(pets|allPets)":\{"nodes":\[\{)/.test(body) && !body.includes('"errors"'),
  },
  // Before each Q1 measurement, for every contender alike: each pet asked once, so that the
  // gateway's response cache holds what Q1 reads, as it does when a shop serves such traffic for
  // longer than the cache's max-age (docs/performance.md); without it, Q1's figure depends on
  // how long ago the run's last Q1 was.
  Q1pass: {
    name: 'every pet once, in order',
    request: (target, n) => q1Request(target, String(1 + (n % PETS))),
    verify: (body) => SCENARIOS.Q1.verify(body),
    requests: PETS,
  },
  // The `cached` scenario's (cached.ts): Q1 over the hot ids only, and Q2, their answers' X-Cache counted.
  cachedQ1: {
    name: `Q1 over the ids 1..${HOT_PETS}`,
    request: (target) => q1Request(target, randomHotPetId()),
    verify: (body) => SCENARIOS.Q1.verify(body),
    countsCache: true,
  },
  cachedQ2: {
    name: 'Q2, the same page each time',
    request: (target) => q2Request(target),
    verify: (body) => SCENARIOS.Q2.verify(body),
    countsCache: true,
  },
  REST: {
    name: 'REST GET /pets/{id}',
    request: () => ({ method: 'GET', path: `/pets/${randomPetId()}`, headers: { 'x-api-key': BENCH_KEY } }),
    verify: (body) => body.startsWith('{"id":'),
  },
  placeOrder: {
    name: 'placeOrder (1 unit)',
    // Each call with a key of its own: placeOrder admits 10 calls a minute per key.
    request: (_target, n) => graphql(orderKey(n % ORDER_KEYS), PLACE, 'PlaceOrder', { petId: randomPetId() }),
    verify: (body) => body.startsWith('{"data":{"placeOrder":{"id":'),
  },
  attacker: {
    name: 'the attack of issue 12, anonymous',
    request: () => ({ method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: ATTACK }) }),
    // Served: the counts came back. A refusal (cost, quota, concurrency) is counted as a mismatch.
    verify: (body) => body.includes('"totalCount":') && !body.includes('"errors"'),
  },
  innocent: {
    name: 'an anonymous visitor reading one pet',
    request: (_target, n) => ({
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': visitor(n) },
      body: JSON.stringify({ query: INNOCENT, variables: { id: randomPetId() } }),
    }),
    verify: (body) => body.startsWith('{"data":{"pet":{"name":'),
  },
  keyedAttacker: {
    name: 'the keyed attack of issue 20 (BUSINESS key, a 100-underscore search and its count, the costliest it may send)',
    request: () => graphql(ATTACK_KEY, KEYED_ATTACK, 'Attack', { s: UNDERSCORES }),
    verify: (body) => body.includes('"totalCount":') && !body.includes('"errors"'),
  },
  cheap: {
    name: 'cheap query { __typename }',
    request: () => graphql(BENCH_KEY, '{ __typename }'),
    verify: (body) => body.startsWith('{"data":{"__typename":"Query"},'),
  },
};
