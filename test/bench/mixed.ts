import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DATABASE, BENCH_KEY, createBenchDatabase, dropBenchDatabase, orderKey } from './fixture';
import { median } from './median';
import type { MixedResult, MixedTask } from './mixed.worker';
import { type BenchServer, startDeployment } from './processes';
import { cacheCounts, hitRatio, percentile, writeResult } from './results';
import { HOT_PETS } from './scenarios';

/**
 * `BENCH_SCENARIOS=mixed`: a catalogue under writes, on two instances sharing PostgreSQL and Redis
 * (one deployment: one Redis prefix), with the response cache on, then with RESPONSE_CACHE=off.
 * 95% reads (mixed.worker.ts: four documents a front end sends, over the pets 1..BENCH_HOT_PETS,
 * with client keys), 5% writes (updateInventory, updatePet, with an ADMIN key), MIXED_CONNECTIONS
 * (default 5) on each instance. Staleness: a probe writes a pet of its own through one instance,
 * then asks the other, right after the write's answer and until it answers the new value; the delay
 * reported is to the last stale answer it got (0 when the first was fresh). BENCH_ROUNDS rounds,
 * the two deployments interleaved, each run after a warm-up: every read over every hot pet once on
 * each instance, then the mix for the bench's warm-up time.
 */
const CONNECTIONS = Number(process.env.MIXED_CONNECTIONS ?? 5);
const WRITE_SHARE = Number(process.env.MIXED_WRITE_SHARE ?? 0.05);
/** Pets 1..PROBE_PETS are the probe's: the load's writes leave them alone, so that only its writes change them. */
const PROBE_PETS = 5;
const PROBE_EVERY_MS = Number(process.env.MIXED_PROBE_EVERY_MS ?? 100);
const PROBE_TIMEOUT_MS = Number(process.env.MIXED_PROBE_TIMEOUT_MS ?? 5_000);
const READER_KEYS = Array.from({ length: 10 }, (_, i) => orderKey(i));
const MB = 2 ** 20;

interface Run extends MixedResult {
  cpuMsPerRequest: number;
}

export interface MixedRow {
  cache: 'on' | 'off';
  reqPerSec: number;
  hitRatio: number;
  xCache: Record<string, number>;
  p50: number;
  p99: number;
  readP50: number;
  readP99: number;
  writeP50: number;
  writeP99: number;
  cpuMsPerRequest: number;
  writes: number;
  staleness: { samples: number; p50: number; p99: number; max: number; timeouts: number };
  /** The probe's X-Cache before its writes and at its first read after each, and when that first fresh answer came. */
  probe: { before: Record<string, number>; after: Record<string, number>; firstFreshP50: number; firstFreshP99: number };
  failed: number;
  rssMb: number[];
}

export async function runMixed(serverUrl: string, env: Record<string, string>, rounds: number, seconds: number, warmUpSeconds: number): Promise<void> {
  const name = `${BENCH_DATABASE}_mixed`;
  console.log('mixed: creating and seeding its database…');
  const databaseUrl = await createBenchDatabase(serverUrl, { name });
  const deployments = new Map<'on' | 'off', BenchServer[]>();
  try {
    for (const cache of ['on', 'off'] as const) {
      deployments.set(cache, await startDeployment(`mixed cache ${cache}`, 2, { ...env, DATABASE_URL: databaseUrl, RESPONSE_CACHE: cache }));
    }
    const runs = new Map<'on' | 'off', Run[]>();
    let runId = 0;
    for (let round = 1; round <= rounds; round += 1) {
      for (const [cache, instances] of deployments) {
        // Every read of the corpus over every hot pet once on each instance, then the mix for the warm-up's time.
        await load(instances, 0, (runId += 1), false, true);
        await load(instances, warmUpSeconds, (runId += 1), false);
        const before = await Promise.all(instances.map((server) => server.stats()));
        const result = await load(instances, seconds, (runId += 1), true);
        const after = await Promise.all(instances.map((server) => server.stats()));
        const cpuMicros = instances.reduce((sum, _, i) => sum + after[i].cpuMicros - before[i].cpuMicros, 0);
        runs.set(cache, [...(runs.get(cache) ?? []), { ...result, cpuMsPerRequest: cpuMicros / 1000 / result.requests }]);
        const stale = result.staleness.map((each) => each.lastStaleMs).sort((a, b) => a - b);
        console.log(
          `mixed round ${round}, cache ${cache}: ${Math.round(result.requests / result.seconds)} req/s, p99 ${result.all.p99} ms, ` +
            `${(hitRatio(result.cache) * 100).toFixed(1)}% HIT, staleness p99 ${percentile(stale, 99)} ms of ${stale.length} writes`,
        );
      }
    }
    const rss = new Map<'on' | 'off', number[]>();
    for (const [cache, instances] of deployments) rss.set(cache, await Promise.all(instances.map(async (server) => (await server.stats()).rss)));
    report(runs, rss);
  } finally {
    for (const instances of deployments.values()) await Promise.all(instances.map((server) => server.stop()));
    await dropBenchDatabase(serverUrl, name);
  }
}

function load(instances: BenchServer[], seconds: number, runId: number, sampled: boolean, warmUp = false): Promise<MixedResult> {
  const task: MixedTask = {
    ports: instances.map((server) => server.port),
    seconds,
    connections: CONNECTIONS,
    hotPets: HOT_PETS,
    probePets: sampled ? PROBE_PETS : 0,
    writeShare: WRITE_SHARE,
    readerKeys: READER_KEYS,
    probeKey: orderKey(READER_KEYS.length),
    writerKey: BENCH_KEY,
    runId,
    probeEveryMs: PROBE_EVERY_MS,
    probeTimeoutMs: PROBE_TIMEOUT_MS,
    warmUp,
  };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(__dirname, 'mixed.worker.js'), JSON.stringify(task)], { maxBuffer: 16 << 20 }, (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout) as MixedResult),
    );
  });
}

function report(runs: Map<'on' | 'off', Run[]>, rss: Map<'on' | 'off', number[]>): void {
  const rows: MixedRow[] = [];
  for (const [cache, measured] of runs) {
    const middle = (value: (run: Run) => number) => median(measured.map(value));
    const xCache: Record<string, number> = {};
    for (const run of measured) for (const [verdict, count] of Object.entries(run.cache)) xCache[verdict] = (xCache[verdict] ?? 0) + count;
    const stale = measured.flatMap((run) => run.staleness.map((each) => each.lastStaleMs)).sort((a, b) => a - b);
    const firstFresh = measured.flatMap((run) => run.staleness.map((each) => each.firstFreshMs)).sort((a, b) => a - b);
    const summed = (pick: (run: Run) => Record<string, number>) => {
      const total: Record<string, number> = {};
      for (const run of measured) for (const [verdict, n] of Object.entries(pick(run))) total[verdict] = (total[verdict] ?? 0) + n;
      return total;
    };
    rows.push({
      cache,
      reqPerSec: Math.round(middle((run) => run.requests / run.seconds)),
      hitRatio: hitRatio(xCache),
      xCache,
      p50: middle((run) => run.all.p50),
      p99: middle((run) => run.all.p99),
      readP50: middle((run) => run.reads.p50),
      readP99: middle((run) => run.reads.p99),
      writeP50: middle((run) => run.writes.p50),
      writeP99: middle((run) => run.writes.p99),
      cpuMsPerRequest: Number(middle((run) => run.cpuMsPerRequest).toFixed(3)),
      writes: measured.reduce((sum, run) => sum + run.writes.requests, 0),
      staleness: {
        samples: stale.length,
        p50: percentile(stale, 50),
        p99: percentile(stale, 99),
        max: stale.length ? stale[stale.length - 1] : NaN,
        timeouts: measured.reduce((sum, run) => sum + run.probeTimeouts, 0),
      },
      probe: {
        before: summed((run) => run.probeXCache.before),
        after: summed((run) => run.probeXCache.after),
        firstFreshP50: Number(percentile(firstFresh, 50).toFixed(1)),
        firstFreshP99: Number(percentile(firstFresh, 99).toFixed(1)),
      },
      failed: measured.reduce((total, run) => total + run.all.failed, 0),
      rssMb: (rss.get(cache) ?? []).map((bytes) => Math.round(bytes / MB)),
    });
  }
  const lines = rows.map(
    (row) =>
      `| ${row.cache} | ${row.reqPerSec} | ${(row.hitRatio * 100).toFixed(1)}% (${cacheCounts(row.xCache) || 'no X-Cache'}) | ${row.p50} / ${row.p99} | ${row.readP50} / ${row.readP99} | ` +
      `${row.writeP50} / ${row.writeP99} | ${row.cpuMsPerRequest} | ${row.staleness.p50} / ${row.staleness.p99} / ${row.staleness.max} (${row.staleness.samples} writes, ${row.staleness.timeouts} over ${PROBE_TIMEOUT_MS} ms) | ` +
      `${row.rssMb.join(' / ')} | ${row.failed} |`,
  );
  console.log(
    [
      `\nMixed: two instances, ${Math.round((1 - WRITE_SHARE) * 100)}% reads over pets 1..${HOT_PETS}, ${Math.round(WRITE_SHARE * 100)}% writes, ${CONNECTIONS} connections on each; medians of the rounds:`,
      '| response cache | req/s | reads\' X-Cache HIT ratio | p50 / p99 ms | reads p50 / p99 | writes p50 / p99 | CPU ms/req (both) | staleness p50 / p99 / max ms | RSS after load MB (A / B) | failed |',
      `|${'---|'.repeat(10)}`,
      ...lines,
    ].join('\n'),
  );
  for (const row of rows) {
    console.log(
      `probe, cache ${row.cache}: the other instance's X-Cache before each write ${cacheCounts(row.probe.before) || '–'}, at the first read after ${cacheCounts(row.probe.after) || '–'}; ` +
        `its first fresh answer ${row.probe.firstFreshP50} ms (p50), ${row.probe.firstFreshP99} ms (p99) after the write's`,
    );
  }
  const targets: [string, boolean][] = [
    ['mixed: every answer verified, cache on and off', rows.length === 2 && rows.every((row) => row.failed === 0)],
    [`mixed: every sampled write seen on the other instance within ${PROBE_TIMEOUT_MS} ms`, rows.every((row) => row.staleness.samples > 0 && row.staleness.timeouts === 0)],
  ];
  for (const [target, met] of targets) console.log(`${met ? 'met    ' : 'MISSED '} ${target}`);
  console.log(`wrote ${writeResult('mixed', { hotPets: HOT_PETS, writeShare: WRITE_SHARE, connections: CONNECTIONS, rows, targets })}`);
}
