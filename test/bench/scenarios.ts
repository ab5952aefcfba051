import { BENCH_KEY, ORDER_KEYS, PETS, orderKey } from './fixture';

export type Target = 'raw' | 'gateway';

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
}

const randomPetId = () => String(1 + Math.floor(Math.random() * PETS));

const graphql = (key: string, query: string, operationName?: string, variables?: Record<string, string>): BenchRequest => ({
  method: 'POST',
  path: '/graphql',
  headers: { 'content-type': 'application/json', 'x-api-key': key },
  body: JSON.stringify({ query, operationName, variables }),
});

const Q1 = 'query Q1($id: ID!) { pet(id: $id) { id name category { name } } }';
const Q2 = 'query Q2 { pets(first: 50) { nodes { id name status category { id name } inventory { quantity } } } }';
const PLACE = 'mutation PlaceOrder($petId: ID!) { placeOrder(input: { petId: $petId, quantity: 1 }) { id } }';

export const SCENARIOS: Record<string, Scenario> = {
  Q1: {
    name: 'Q1: pet(id) with its category name',
    request: () => graphql(BENCH_KEY, Q1, 'Q1', { id: randomPetId() }),
    verify: (body) => body.startsWith('{"data":{"pet":{"id":'),
  },
  Q2: {
    name: 'Q2: 50 pets with category and stock',
    request: () => graphql(BENCH_KEY, Q2, 'Q2'),
    verify: (body) => body.startsWith('{"data":{"pets":{"nodes":[{') && !body.includes('"errors"'),
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
  cheap: {
    name: 'cheap query { __typename }',
    request: () => graphql(BENCH_KEY, '{ __typename }'),
    verify: (body) => body === '{"data":{"__typename":"Query"}}\n' || body === '{"data":{"__typename":"Query"}}',
  },
};
