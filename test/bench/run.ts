import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBenchDatabase, dropBenchDatabase } from './fixture';
import { type BenchServer, type LoadResult, runLoad, startServer } from './processes';

/**
 * `npm run bench`: the gateway against the raw limit on real PostgreSQL (DATABASE_URL) with its
 * limiter on Redis (REDIS_URL), contenders interleaved over several rounds, medians reported.
 * BENCH_SECONDS (measured seconds per run, default 6) and BENCH_ROUNDS (default 3) bound it;
 * BENCH_SCENARIOS (such as `Q1,Q2`) runs some scenarios only.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const WARM_UP_SECONDS = 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** Which servers each scenario runs on; the first is the one the others are compared with. */
const ALL: [scenario: string, contenders: string[]][] = [
  ['Q1', ['raw', 'gateway']],
  ['Q2', ['raw', 'gateway']],
  ['REST', ['raw', 'gateway']],
  ['placeOrder', ['raw', 'gateway']],
  ['cheap', ['gateway, limiter off', 'gateway, memory store', 'gateway']],
];
const ONLY = process.env.BENCH_SCENARIOS?.split(',');
const PLAN = ALL.filter(([scenario]) => !ONLY || ONLY.includes(scenario));

interface Measured extends LoadResult {
  statementsPerRequest: number;
  cpuMsPerRequest: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function measure(server: BenchServer, scenario: string, firstRequest: number): Promise<Measured> {
  const target = server.name === 'raw' ? 'raw' : 'gateway';
  await runLoad(server.port, scenario, target, WARM_UP_SECONDS, firstRequest);
  const before = await server.stats();
  const result = await runLoad(server.port, scenario, target, SECONDS, firstRequest + 100_000);
  const after = await server.stats();
  return {
    ...result,
    statementsPerRequest: (after.statements - before.statements) / result.requests,
    cpuMsPerRequest: (after.cpuMicros - before.cpuMicros) / 1000 / result.requests,
  };
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL: expected the postgres:// URL of a server the bench may create a database on, got nothing');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  console.log('creating and seeding the bench database (20 categories, 10,000 pets, 50,000 orders)…');
  const databaseUrl = await createBenchDatabase(serverUrl);
  // The servers run as deployed: NODE_ENV=production (graphql-js skips its development checks).
  const env = { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, NODE_ENV: 'production' };
  const servers = new Map<string, BenchServer>();
  try {
    servers.set('raw', await startServer('raw', 'raw.server.js', [], env));
    servers.set('gateway', await startServer('gateway', 'gateway.server.js', ['redis'], env));
    servers.set('gateway, memory store', await startServer('gateway, memory store', 'gateway.server.js', ['memory'], env));
    servers.set('gateway, limiter off', await startServer('gateway, limiter off', 'gateway.server.js', ['off'], env));

    const runs = new Map<string, Measured[]>();
    let requestNumber = 0;
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const [scenario, contenders] of PLAN) {
        for (const contender of contenders) {
          const result = await measure(servers.get(contender)!, scenario, requestNumber);
          requestNumber += result.requests + 100_000;
          const key = `${scenario}\t${contender}`;
          runs.set(key, [...(runs.get(key) ?? []), result]);
          console.log(`round ${round}: ${scenario} on ${contender}: ${Math.round(result.reqPerSec)} req/s, p99 ${result.p99} ms`);
        }
      }
    }
    const rss = (await servers.get('gateway')!.stats()).rss;
    report(runs, rss);
  } finally {
    for (const server of servers.values()) await server.stop();
    await dropBenchDatabase(serverUrl);
  }
}

function report(runs: Map<string, Measured[]>, gatewayRss: number): void {
  const rows: Record<string, number | string>[] = [];
  const medianOf = (key: string, field: keyof Measured) => median((runs.get(key) ?? []).map((run) => run[field]));
  for (const [scenario, contenders] of PLAN) {
    const baseline = medianOf(`${scenario}\t${contenders[0]}`, 'reqPerSec');
    for (const contender of contenders) {
      const key = `${scenario}\t${contender}`;
      rows.push({
        scenario,
        contender,
        reqPerSec: Math.round(medianOf(key, 'reqPerSec')),
        ratio: Number((medianOf(key, 'reqPerSec') / baseline).toFixed(2)),
        p50: medianOf(key, 'p50'),
        p99: medianOf(key, 'p99'),
        sqlPerRequest: Number(medianOf(key, 'statementsPerRequest').toFixed(2)),
        cpuMsPerRequest: Number(medianOf(key, 'cpuMsPerRequest').toFixed(3)),
        failed: (runs.get(key) ?? []).reduce((sum, run) => sum + run.errors + run.mismatches, 0),
      });
    }
  }
  const header = '| scenario | server | req/s | vs first | p50 ms | p99 ms | SQL/req | CPU ms/req | failed |';
  const lines = rows.map(
    (row) => `| ${row.scenario} | ${row.contender} | ${row.reqPerSec} | ${row.ratio}× | ${row.p50} | ${row.p99} | ${row.sqlPerRequest} | ${row.cpuMsPerRequest} | ${row.failed} |`,
  );
  const table = [header, '|---|---|---|---|---|---|---|---|---|', ...lines].join('\n');
  const find = (scenario: string, contender: string) =>
    rows.find((row) => row.scenario === scenario && row.contender === contender) ?? { ratio: NaN, sqlPerRequest: NaN, p99: NaN };
  const targets = [
    ['Q1 ≥ 0.40× raw', Number(find('Q1', 'gateway').ratio) >= 0.4],
    ['Q2 ≥ 0.26× raw', Number(find('Q2', 'gateway').ratio) >= 0.26],
    ['Q1, Q2 ≤ 2 SQL statements a request', Number(find('Q1', 'gateway').sqlPerRequest) <= 2 && Number(find('Q2', 'gateway').sqlPerRequest) <= 2],
    ['p99 < 30 ms at 10 connections (Q1, Q2, REST)', ['Q1', 'Q2', 'REST'].every((s) => Number(find(s, 'gateway').p99) < 30)],
    ['gateway RSS after load < 200 MB', gatewayRss < 200 * 1024 * 1024],
    ['Redis store costs ≤ 10% of throughput', Number(find('cheap', 'gateway').ratio) >= 0.9],
  ] as const;
  console.log(`\n${table}\n\ngateway RSS after load: ${(gatewayRss / 1024 / 1024).toFixed(0)} MB`);
  for (const [target, met] of targets) console.log(`${met ? 'met   ' : 'MISSED'} ${target}`);
  const directory = join(__dirname, '..', '..', '..', 'test', 'bench', 'results');
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, rows, gatewayRss, targets }, null, 2));
  console.log(`\nwrote ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
