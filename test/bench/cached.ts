import { join } from 'node:path';
import { checkAnswers } from './answers';
import { BENCH_DATABASE, createBenchDatabase, dropBenchDatabase } from './fixture';
import { median } from './median';
import { type BenchServer, installPeer, type LoadResult, runLoad, startServer } from './processes';
import { cacheCounts, hitRatio, writeResult } from './results';
import { HOT_PETS, type Target } from './scenarios';

/**
 * `BENCH_SCENARIOS=cached`: the response cache at its best. Q1 over the ids 1..BENCH_HOT_PETS
 * (default 100) and Q2, each run after a warm-up pass, on the gateway with its cache on, beside
 * the bare GET server, PostGraphile and the gateway with RESPONSE_CACHE=off. Each gateway is
 * asked by GET (the document in the URL, as the bare server is asked by GET), PostGraphile by
 * POST as everywhere else. Every answer is verified; the gateways' X-Cache are counted.
 * On a database of its own; BENCH_ROUNDS rounds, contenders interleaved, medians reported.
 */
interface Contender {
  name: string;
  target: Target;
  server: BenchServer;
}

interface Run extends LoadResult {
  cpuMsPerRequest: number;
}

export interface CachedRow {
  query: string;
  server: string;
  askedBy: string;
  reqPerSec: number;
  xRawGet: number;
  xPostGraphile: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
  /** X-Cache over the measured runs, and HITs over all of them. */
  cache: Record<string, number>;
  hitRatio: number;
  failed: number;
  rssMb: number;
}

const QUERIES = [
  ['Q1', 'cachedQ1'],
  ['Q2', 'cachedQ2'],
] as const;
const askedBy = (target: Target, query: string): string =>
  target === 'raw GET' ? (query === 'Q1' ? 'GET /pet/:id' : 'GET /pets50') : target === 'gateway GET' ? 'GET /graphql?query=…' : 'POST /graphql';
const MB = 2 ** 20;

export async function runCached(serverUrl: string, env: Record<string, string>, rounds: number, seconds: number, warmUpSeconds: number): Promise<void> {
  const name = `${BENCH_DATABASE}_cached`;
  console.log(`cached: creating and seeding its database…`);
  const databaseUrl = await createBenchDatabase(serverUrl, { name });
  const serverEnv = { ...env, DATABASE_URL: databaseUrl };
  const contenders: Contender[] = [];
  const stamp = Date.now();
  try {
    installPeer();
    const start = async (label: string, target: Target, script: string, args: string[], extra: Record<string, string> = {}) =>
      contenders.push({ name: label, target, server: await startServer(label, script, args, { ...serverEnv, ...extra }) });
    await start('raw GET', 'raw GET', 'raw.server.js', []);
    await start('postgraphile', 'postgraphile', join('..', '..', '..', 'test', 'bench', 'peer', 'postgraphile.server.mjs'), [], { GRAPHILE_ENV: 'production' });
    await start('gateway, cache on', 'gateway GET', 'gateway.server.js', ['redis'], { RESPONSE_CACHE: 'on', BENCH_REDIS_PREFIX: `bench:cached-on:${stamp}` });
    await start('gateway, cache off', 'gateway GET', 'gateway.server.js', ['redis'], { RESPONSE_CACHE: 'off', BENCH_REDIS_PREFIX: `bench:cached-off:${stamp}` });
    // Twice for the gateways: the second answers may come from the cache, and must be as right.
    for (const { name: label, target, server } of contenders) {
      for (let pass = 0; pass < (target === 'gateway GET' ? 2 : 1); pass += 1) await checkAnswers(label, server.port, target, databaseUrl);
    }
    console.log('cached: every contender answers Q1 and Q2 as the database holds them');

    const runs = new Map<string, Run[]>();
    for (let round = 1; round <= rounds; round += 1) {
      for (const [query, scenario] of QUERIES) {
        for (const { name: label, target, server } of contenders) {
          // The warm-up pass fills the cache; only what follows is measured.
          await runLoad(server.port, scenario, target, warmUpSeconds, 0);
          const before = await server.stats();
          const result = await runLoad(server.port, scenario, target, seconds, 0);
          const after = await server.stats();
          const run = { ...result, cpuMsPerRequest: (after.cpuMicros - before.cpuMicros) / 1000 / result.requests };
          runs.set(`${query}\t${label}`, [...(runs.get(`${query}\t${label}`) ?? []), run]);
          const hits = target === 'gateway GET' && result.cache ? `, ${(hitRatio(result.cache) * 100).toFixed(1)}% HIT` : '';
          console.log(`cached round ${round}: ${query} on ${label}: ${Math.round(result.reqPerSec)} req/s, p99 ${result.p99} ms${hits}`);
        }
      }
    }
    const rss = new Map<string, number>();
    for (const { name: label, server } of contenders) rss.set(label, (await server.stats()).rss);
    report(runs, contenders, rss);
  } finally {
    for (const { server } of contenders) await server.stop();
    await dropBenchDatabase(serverUrl, name);
  }
}

function report(runs: Map<string, Run[]>, contenders: Contender[], rss: Map<string, number>): void {
  const medianOf = (query: string, label: string, field: 'reqPerSec' | 'p50' | 'p99' | 'cpuMsPerRequest') => median((runs.get(`${query}\t${label}`) ?? []).map((run) => run[field]));
  const rows: CachedRow[] = [];
  for (const [query] of QUERIES) {
    for (const { name: label, target } of contenders) {
      const measured = runs.get(`${query}\t${label}`) ?? [];
      const cache: Record<string, number> = {};
      for (const run of measured) for (const [verdict, count] of Object.entries(run.cache ?? {})) cache[verdict] = (cache[verdict] ?? 0) + count;
      const reqPerSec = medianOf(query, label, 'reqPerSec');
      rows.push({
        query,
        server: label,
        askedBy: askedBy(target, query),
        reqPerSec: Math.round(reqPerSec),
        xRawGet: Number((reqPerSec / medianOf(query, 'raw GET', 'reqPerSec')).toFixed(2)),
        xPostGraphile: Number((reqPerSec / medianOf(query, 'postgraphile', 'reqPerSec')).toFixed(2)),
        p50: medianOf(query, label, 'p50'),
        p99: medianOf(query, label, 'p99'),
        cpuMsPerRequest: Number(medianOf(query, label, 'cpuMsPerRequest').toFixed(3)),
        cache,
        hitRatio: hitRatio(cache),
        failed: measured.reduce((sum, run) => sum + run.errors + run.mismatches, 0),
        rssMb: Math.round((rss.get(label) ?? NaN) / MB),
      });
    }
  }
  const isGateway = (row: CachedRow) => row.server.startsWith('gateway');
  const lines = rows.map(
    (row) =>
      `| ${row.query} | ${row.server} | ${row.askedBy} | ${row.reqPerSec} | ${row.xRawGet}× | ${row.xPostGraphile}× | ${row.p50} | ${row.p99} | ${row.cpuMsPerRequest} | ` +
      `${isGateway(row) ? `${(row.hitRatio * 100).toFixed(1)}% (${cacheCounts(row.cache) || 'no X-Cache'})` : ''} | ${row.rssMb} | ${row.failed} |`,
  );
  console.log(
    [
      `\nCached reads (Q1 over ids 1..${HOT_PETS}, Q2 one page), after a warm-up pass; medians of the rounds:`,
      '| query | server | asked by | req/s | ×raw GET | ×PostGraphile | p50 ms | p99 ms | CPU ms/req | X-Cache HIT ratio | RSS after load MB | failed |',
      `|${'---|'.repeat(12)}`,
      ...lines,
    ].join('\n'),
  );
  const row = (query: string, server: string) => rows.find((each) => each.query === query && each.server === server)!;
  const targets: [string, boolean][] = QUERIES.flatMap(([query]) => {
    const cached = row(query, 'gateway, cache on');
    return [
      [`cached ${query} ≥ 0.6× raw GET req/s`, cached.xRawGet >= 0.6],
      [`cached ${query} ≥ 3× PostGraphile req/s`, cached.xPostGraphile >= 3],
      [`cached ${query} p99 ≤ PostGraphile's p99`, cached.p99 <= row(query, 'postgraphile').p99],
      [`cached ${query} X-Cache HIT ratio ≥ 99% when warm`, cached.hitRatio >= 0.99],
      [`cached ${query}: every contender's every answer verified`, rows.filter((each) => each.query === query).every((each) => each.failed === 0)],
    ] as [string, boolean][];
  });
  for (const [target, met] of targets) console.log(`${met ? 'met    ' : 'MISSED '} ${target}`);
  console.log(`wrote ${writeResult('cached', { hotPets: HOT_PETS, rows, targets })}`);
}
