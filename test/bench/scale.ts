import { performance } from 'node:perf_hooks';
import { print } from 'graphql';
import { corpusOperation } from '../frontend/corpus';
import { BENCH_DATABASE, BENCH_KEY, createBenchDatabase, dropBenchDatabase } from './fixture';
import { runLoad, startServer } from './processes';

/**
 * `BENCH_SCENARIOS=scale`: the catalogue's reads as the table grows. For each size of SCALE_PETS
 * (default 10,000, 100,000 and 1,000,000 pets, loaded by SQL), one client asks each query 20
 * times after 2 warm-ups (median and p99, HTTP included), and each query of the front end's corpus,
 * then Q1 and Q2 run at 10 connections.
 */
const SIZES = (process.env.SCALE_PETS ?? '10000,100000,1000000').split(',').map(Number);
const RUNS = 20;
const WARM_UPS = 2;

/** The queries whose cost could grow with the table: lookups, pages, counts, searches. */
const QUERIES: [label: string, query: string][] = [
  ['`pet(id)` with its category', '{ pet(id: "4242") { id name category { name } } }'],
  ['`pets(first: 50)` with status, category, stock', '{ pets(first: 50) { nodes { id name status category { name } inventory { quantity } } } }'],
  ['`inventory(first: 50, filter: { status: SOLD })`', '{ inventory(first: 50, filter: { status: SOLD }) { nodes { petId quantity } } }'],
  ['`pets(first: 1) { totalCount }`', '{ pets(first: 1) { totalCount } }'],
  ['`pets(filter: { status: AVAILABLE }) { totalCount }`', '{ pets(filter: { status: AVAILABLE }) { totalCount } }'],
  ['`categories(first: 20) { nodes { pets { totalCount } } }`', '{ categories(first: 20) { nodes { pets { totalCount } } } }'],
  ['`pets(first: 10, filter: { nameContains: "99999" })`', '{ pets(first: 10, filter: { nameContains: "99999" }) { nodes { id name } } }'],
  ['`pets(filter: { nameContains: "4242" }) { totalCount }`', '{ pets(filter: { nameContains: "4242" }) { totalCount } }'],
];

/** The front end's corpus (test/frontend/documents), its queries at their largest page. */
const CORPUS: [label: string, operation: string, variables: Record<string, unknown>][] = [
  ['corpus PetList, 100 with stock, a name search and its count', 'PetList', { first: 100, withStock: true, filter: { nameContains: 'Pet 12' } }],
  ['corpus PetList, 100 available', 'PetList', { first: 100, filter: { status: 'AVAILABLE' } }],
  ['corpus PetDetail with kin', 'PetDetail', { id: '4242', withKin: true }],
  ['corpus CategoryList, 100', 'CategoryList', { first: 100 }],
  ['corpus MyOrders, 100 (an admin: every order)', 'MyOrders', { first: 100 }],
  ['corpus Quota', 'Quota', {}],
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** Median and p99 in ms; or the status of a refusal (a document over the cost limit, say), which is not timed. */
type Timing = { median: number; p99: number } | { refused: number };

async function timeQuery(port: number, query: string, variables: Record<string, unknown> = {}): Promise<Timing> {
  const ask = async () => {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': BENCH_KEY },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { errors?: unknown };
    if (response.status >= 400 && response.status < 500) return response.status;
    if (response.status !== 200 || body.errors) throw new Error(`${query} answered ${response.status}: ${JSON.stringify(body)}`);
    return 200;
  };
  for (let i = 0; i < WARM_UPS; i += 1) {
    const status = await ask();
    if (status !== 200) return { refused: status };
  }
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const start = performance.now();
    await ask();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { median: percentile(times, 50), p99: percentile(times, 99) };
}

export async function runScale(serverUrl: string, env: Record<string, string>, seconds: number): Promise<void> {
  const name = `${BENCH_DATABASE}_scale`;
  const columns: { pets: number; times: Timing[]; q1: number; q2: number }[] = [];
  try {
    for (const pets of SIZES) {
      const loadStart = performance.now();
      const url = await createBenchDatabase(serverUrl, { name, pets });
      console.log(`scale: ${pets.toLocaleString('en')} pets loaded in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);
      const server = await startServer(`gateway, ${pets} pets`, 'gateway.server.js', ['redis'], { ...env, DATABASE_URL: url });
      try {
        const times = [];
        for (const [, query] of QUERIES) times.push(await timeQuery(server.port, query));
        for (const [, name, variables] of CORPUS) times.push(await timeQuery(server.port, print(corpusOperation(name)), variables));
        const q1 = (await runLoad(server.port, 'Q1', 'gateway', seconds, 0)).reqPerSec;
        const q2 = (await runLoad(server.port, 'Q2', 'gateway', seconds, 1_000_000)).reqPerSec;
        columns.push({ pets, times, q1, q2 });
      } finally {
        await server.stop();
      }
    }
  } finally {
    await dropBenchDatabase(serverUrl, name);
  }
  const ms = (timing: Timing) => ('refused' in timing ? `refused (${timing.refused})` : `${timing.median.toFixed(1)} / ${timing.p99.toFixed(1)}`);
  const header = `| query | ${columns.map(({ pets }) => `${pets.toLocaleString('en')}: median / p99 ms`).join(' | ')} |`;
  const labels = [...QUERIES.map(([label]) => label), ...CORPUS.map(([label]) => label)];
  const lines = labels.map((label, i) => `| ${label} | ${columns.map(({ times }) => ms(times[i])).join(' | ')} |`);
  const base = columns[0];
  const throughput = (field: 'q1' | 'q2') =>
    `| ${field.toUpperCase()} req/s (10 connections) | ${columns.map((column) => `${Math.round(column[field])} (${(column[field] / base[field]).toFixed(2)}×)`).join(' | ')} |`;
  console.log([header, `|---|${'---|'.repeat(columns.length)}`, ...lines, throughput('q1'), throughput('q2')].join('\n'));
}
