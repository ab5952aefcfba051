import { join } from 'node:path';
import { BENCH_DATABASE, createBenchDatabase, dropBenchDatabase } from './fixture';
import { median } from './median';
import { type BenchServer, gatewayScriptOf, runLoad, startServer } from './processes';
import { type Sampling, startSpanSink, tracedEnv } from './span-sink';

/** What each pairing loads, in order (BENCH_PAIRED_LOADS, such as `Q1`). */
const SCENARIOS = (process.env.BENCH_PAIRED_LOADS ?? 'Q2,Q1').split(',');
/** Each server's own load generator: two of them share the machine. */
const CONNECTIONS = 5;
const MB = 2 ** 20;

/** How a paired server traces (BENCH_PAIRED_TRACING): not at all, or as a traced contender samples. */
export type PairedTracing = 'off' | Sampling;

/**
 * `BENCH_SCENARIOS=paired`: this checkout's gateway and the baseline's (BENCH_BASELINE, this very
 * checkout when unset, with BENCH_BASELINE_NODE_FLAGS) loaded at the same moment, each by a load
 * generator of its own, Q2 then Q1, in `slices` slices of `seconds`; reported per slice and as
 * medians: the baseline's CPU per request over the gateway's, and both resident memories. On a
 * machine shared with other work both servers meet the same interference, which the main
 * scenarios' one-after-the-other runs do not. The pairing runs twice, each server started first
 * once: the one started second reads a few percent dearer. `tracing` says how each of the two
 * traces (gateway, baseline), exporting to a receiver in the bench's process.
 */
export async function runPaired(
  serverUrl: string,
  env: Record<string, string>,
  baseline: { checkout?: string; nodeFlags: string[] },
  slices: number,
  seconds: number,
  warmUpSeconds: number,
  tracing: [gateway: PairedTracing, baseline: PairedTracing] = ['off', 'off'],
): Promise<void> {
  const name = `${BENCH_DATABASE}_paired`;
  const serverEnv = { ...env, DATABASE_URL: await createBenchDatabase(serverUrl, { name }) };
  const sink = tracing.some((each) => each !== 'off') ? await startSpanSink() : undefined;
  const envTraced = (each: PairedTracing) => (each === 'off' || !sink ? serverEnv : tracedEnv(serverEnv, sink, each));
  const baselineScript = gatewayScriptOf(baseline.checkout ?? join(__dirname, '..', '..', '..'));
  const ratios = new Map<string, number[]>(SCENARIOS.map((scenario) => [scenario, []]));
  let firstRequest = 0;

  const runPair = async (baselineFirst: boolean) => {
    const starts = [
      () => startServer('gateway', 'gateway.server.js', ['redis'], envTraced(tracing[0])),
      () => startServer('baseline', baselineScript, ['redis'], envTraced(tracing[1]), baseline.nodeFlags),
    ];
    const servers: BenchServer[] = [];
    try {
      for (const start of baselineFirst ? starts.reverse() : starts) servers.push(await start());
      const pair = baselineFirst ? [servers[1], servers[0]] : servers;
      console.log(`paired, ${baselineFirst ? 'baseline' : 'gateway'} started first`);
      for (const scenario of SCENARIOS) {
        await Promise.all(pair.map((server) => runLoad(server.port, scenario, 'gateway', warmUpSeconds, (firstRequest += 1_000_000), CONNECTIONS)));
        for (let slice = 1; slice <= slices; slice += 1) {
          const before = await Promise.all(pair.map((server) => server.stats()));
          const loads = await Promise.all(pair.map((server) => runLoad(server.port, scenario, 'gateway', seconds, (firstRequest += 1_000_000), CONNECTIONS)));
          const after = await Promise.all(pair.map((server) => server.stats()));
          const cpu = pair.map((_, i) => (after[i].cpuMicros - before[i].cpuMicros) / 1000 / loads[i].requests);
          const ratio = cpu[1] / cpu[0];
          ratios.get(scenario)!.push(ratio);
          const side = (i: number) => `${cpu[i].toFixed(3)} ms/req (${loads[i].requests} req, RSS ${Math.round(after[i].rss / MB)} MB)`;
          console.log(`  ${scenario} slice ${slice}: gateway ${side(0)}, baseline ${side(1)}: ${ratio.toFixed(3)}`);
        }
      }
    } finally {
      for (const server of servers) await server.stop();
    }
  };

  try {
    await runPair(false);
    await runPair(true);
  } finally {
    await sink?.close();
    await dropBenchDatabase(serverUrl, name);
  }
  for (const [scenario, values] of ratios) {
    const above = values.filter((ratio) => ratio > 1).length;
    const range = `${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}`;
    console.log(`paired ${scenario}: the baseline's CPU per request over the gateway's, median ${median(values).toFixed(3)} (${range}), above 1 in ${above} of ${values.length}`);
  }
}
