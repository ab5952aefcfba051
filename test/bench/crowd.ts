import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Plan, PLAN_LIMITS } from '../../src/auth/plans';
import { type CrowdDocument, crowdQuery, crowdRequestBody } from './crowd-documents';
import type { CrowdMember, CrowdResult, CrowdTask } from './crowd.worker';
import { BENCH_DATABASE, CROWD_KEYS, createBenchDatabase, crowdKey, dropBenchDatabase, victimKey } from './fixture';
import { type Nginx, startNginx } from '../helpers/nginx-server';
import { statusList } from './keyed-attack';
import { machineBusyMicros, processTreeMicros } from './machine-cpu';
import { type BackendCpu, backendCpu, cpuSpent } from './pg-cpu';
import { type BenchServer, startDeployment } from './processes';

/**
 * Issue 30's crowds: many identities at once, each within its own limits, against two paying
 * clients. Victims: a PRO key and a BUSINESS key, each reading one pet at CROWD_VICTIM_RATE
 * requests a second (default 10), spread over the instances, with keys of their own each phase,
 * each from an address of its own (127.0.1.1, 127.0.1.2).
 * Phases: the victims alone; during an anonymous crowd (59 addresses, 127.0.0.2 to 127.0.0.60,
 * the client sockets bound to them); during a crowd of 30 FREE keys (each from an address of its
 * own, 127.0.2.1 to 127.0.2.30). Every crowd member keeps its in-flight bound (FREE's, 16) of
 * requests in flight on every instance, each the most expensive document it may send
 * (crowd-documents.ts), chosen at the start by its cost and database time.
 * On one instance, then on two sharing PostgreSQL and Redis; CROWD_SECONDS (default 20) a phase.
 * On a database of its own holding CROWD_PETS pets (default 100,000), whatever BENCH_PETS says.
 * CROWD_PROXY=nginx sends victims and crowd through the shipped deploy/nginx/petstore.conf in
 * front of the instances (docs/scaling-out.md "Behind a reverse proxy"), the instances counting
 * clients by its X-Forwarded-For; each member keeps as many requests in flight as it would
 * straight to the instances. Victims keep CROWD_VICTIM_POOL (default 4) kept-alive connections to
 * each port, opened before each phase's load starts, as a back-end client's pool does (0: as many
 * as their requests need). Each row says where the machine's CPU went meanwhile: the gateways,
 * PostgreSQL's backends, nginx, the crowd's and the victims' client processes, and the rest.
 */
const PETS = Number(process.env.CROWD_PETS ?? 100_000);
const SECONDS = Number(process.env.CROWD_SECONDS ?? 20);
const VICTIM_RATE = Number(process.env.CROWD_VICTIM_RATE ?? 10);
const VICTIM_POOL = Number(process.env.CROWD_VICTIM_POOL ?? 4);
/** Time for the victims to open their pools before the load starts. */
const START_AFTER_MS = 500;
const IN_FLIGHT = PLAN_LIMITS[Plan.FREE].requestsInFlight;
/** Which sets of instances run (CROWD_INSTANCES, default `1,2`), and which phases (CROWD_PHASES: names' beginnings, e.g. `alone,anonymous`; default all). */
const INSTANCE_COUNTS = (process.env.CROWD_INSTANCES ?? '1,2').split(',').map(Number);
const PHASES = (['alone', 'anonymous crowd', 'FREE-key crowd'] as const).filter(
  (phase) => !process.env.CROWD_PHASES || process.env.CROWD_PHASES.split(',').some((start) => phase.startsWith(start.trim())),
);
const ADDRESSES = Array.from({ length: 59 }, (_, i) => `127.0.0.${i + 2}`);
const THROUGH_NGINX = process.env.CROWD_PROXY === 'nginx';
/** Each victim a client of its own, apart from the crowd's addresses. */
const VICTIM_ADDRESSES = ['127.0.1.1', '127.0.1.2'];
const VICTIMS = [
  ['PRO', 'pro'],
  ['BUSINESS', 'business'],
] as const;
/**
 * The victims' keys for the `run`th run of the victims (a warm-up or a phase): keys of their
 * own each time, for PRO's quota, 300 a minute, is half what 10 a second asks over a minute, and
 * a phase of 20 s stays within it.
 */
const victimKeys = (run: number) => VICTIMS.map(([, plan]) => victimKey(plan, run));
/** A crowd's first seconds, when its members' first requests all arrive at once, told apart from what follows. */
const SETTLED_AFTER_MS = 5_000;
/** The goal: no victim refused, and its p99 at most this during either crowd. */
const VICTIM_P99_MS = 100;

type Phase = 'alone' | 'anonymous crowd' | 'FREE-key crowd';
const CROWDS: Record<Exclude<Phase, 'alone'>, CrowdMember[]> = {
  'anonymous crowd': ADDRESSES.map((localAddress) => ({ localAddress })),
  // Thirty customers, each from an address of its own, as nginx's per-address bounds see them.
  'FREE-key crowd': Array.from({ length: CROWD_KEYS }, (_, i) => ({ key: crowdKey(i), localAddress: `127.0.2.${i + 1}` })),
};

export interface VictimFigures {
  requests: number;
  /**
   * Answers by HTTP status; `200 errors` a 200 that is not the pet, `timeout` none within the
   * worker's 10 s (a refusal as the client sees it), `error` a failed connection.
   */
  statuses: Record<string, number>;
  /** The start of the first body of each status but 200. */
  samples: Record<string, string>;
  p50: number;
  p90: number;
  p99: number;
  /** The p99 of the requests sent once the crowd had been at it SETTLED_AFTER_MS: without its arrival. */
  settledP99: number;
}

/** Where the machine's CPU went during a phase, in cores (CPU seconds a second); NaN where it cannot be read. */
export interface CpuSplit {
  gateways: number;
  postgres: number;
  nginx: number;
  crowd: number;
  victims: number;
  other: number;
  machine: number;
}

export interface CrowdRow {
  instances: number;
  phase: Phase;
  cpu: CpuSplit;
  victims: Record<(typeof VICTIMS)[number][0], VictimFigures>;
  /** The crowd's answers by HTTP status, and how many carried their counts; none while alone. */
  crowd?: { requests: number; statuses: Record<string, number>; served: number; samples: Record<string, string> };
}

export interface CrowdRun {
  pets: number;
  document: { query: string; cost: number; limit: number };
  /** Each shape at the most aliases admitted: its cost, and one request's time for a FREE key alone. */
  candidates: { shape: CrowdDocument['shape']; aliases: number; cost: number; ms: number }[];
  rows: CrowdRow[];
}

/** `env`: the gateway's environment but its database, which this makes on `serverUrl`, and drops. */
export async function runCrowd(serverUrl: string, env: Record<string, string>): Promise<CrowdRun> {
  const name = `${BENCH_DATABASE}_crowd`;
  console.log(`crowd: creating and seeding its database (${PETS.toLocaleString('en')} pets)…`);
  const databaseUrl = await createBenchDatabase(serverUrl, { name, pets: PETS });
  try {
    // Fresh deployments, one a set of instances: no limit of one run carries into the next.
    let deployments = 0;
    const proxied: Record<string, string> = THROUGH_NGINX ? { TRUST_PROXY: '127.0.0.1' } : {};
    return await runPhases(databaseUrl, (count) => startDeployment(`crowd ${(deployments += 1)}`, count, { ...env, ...proxied, DATABASE_URL: databaseUrl }));
  } finally {
    await dropBenchDatabase(serverUrl, name);
  }
}

async function runPhases(databaseUrl: string, start: (count: number) => Promise<BenchServer[]>): Promise<CrowdRun> {
  const [probe] = await start(1);
  const chosen = await mostExpensiveDocument(probe.port).finally(() => probe.stop());
  console.log(`crowd: each member sends ${chosen.query} (cost ${chosen.cost} of ${chosen.limit})`);
  const rows: CrowdRow[] = [];
  for (const count of INSTANCE_COUNTS) {
    const instances = await start(count);
    let proxy: Nginx | undefined;
    try {
      proxy = THROUGH_NGINX ? await startNginx(instances.map((server) => server.port)) : undefined;
      // Through nginx, its one port once for each instance: the same requests in flight as straight to them.
      const ports = instances.map((server) => (proxy ? Number(new URL(proxy.url).port) : server.port));
      let run = 0;
      const victims = () => ({ keys: victimKeys(run++), addresses: VICTIM_ADDRESSES, perSecond: VICTIM_RATE, pets: PETS, pool: VICTIM_POOL });
      await runTask({ ports, seconds: 2, victims: victims() });
      for (const phase of PHASES) {
        const before = await cpuReading(instances, proxy, databaseUrl);
        // Victims and crowd in processes of their own: the crowd's load does not delay the victims' clocks.
        const [victimsRun, crowdRun] = await Promise.all([
          runTask({ ports, seconds: SECONDS, startAfterMs: START_AFTER_MS, victims: victims() }),
          phase === 'alone' ? undefined : runTask({ ports, seconds: SECONDS, startAfterMs: START_AFTER_MS, crowd: { members: CROWDS[phase], inFlight: IN_FLIGHT, document: chosen.document } }),
        ]);
        const cpu = cpuSplit(before, await cpuReading(instances, proxy, databaseUrl), victimsRun.cpuMicros, crowdRun?.cpuMicros ?? 0);
        const row = rowOf(count, phase, cpu, { victims: victimsRun.victims, crowd: crowdRun?.crowd });
        console.log(`crowd on ${count} instance(s), ${phase}: ${VICTIMS.map(([plan]) => `${plan} p99 ${row.victims[plan].p99} ms`).join(', ')}`);
        rows.push(row);
      }
    } finally {
      await proxy?.stop();
      await Promise.all(instances.map((server) => server.stop()));
    }
  }
  return { pets: PETS, document: { query: chosen.query, cost: chosen.cost, limit: chosen.limit }, candidates: chosen.candidates, rows };
}

function runTask(task: CrowdTask): Promise<CrowdResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(__dirname, 'crowd.worker.js'), JSON.stringify(task)], { maxBuffer: 64 << 20 }, (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout) as CrowdResult),
    );
  });
}

const percentile = (sorted: number[], p: number) => (sorted.length ? Number(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)].toFixed(1)) : NaN);

interface CpuReading {
  at: number;
  gateways: number;
  postgres: BackendCpu;
  nginx: number;
  machine: number;
}

async function cpuReading(instances: BenchServer[], proxy: Nginx | undefined, databaseUrl: string): Promise<CpuReading> {
  const gateways = (await Promise.all(instances.map((server) => server.stats()))).reduce((sum, stats) => sum + stats.cpuMicros, 0);
  return { at: performance.now(), gateways, postgres: await backendCpu(databaseUrl), nginx: proxy ? processTreeMicros(proxy.pid) : 0, machine: machineBusyMicros() };
}

/** Cores used between two readings by each part, the client processes' own CPU given (µs). */
function cpuSplit(before: CpuReading, after: CpuReading, victimsMicros: number, crowdMicros: number): CpuSplit {
  const wallMicros = (after.at - before.at) * 1000;
  const cores = (micros: number) => Number((micros / wallMicros).toFixed(2));
  const parts = { gateways: after.gateways - before.gateways, postgres: cpuSpent(before.postgres, after.postgres), nginx: after.nginx - before.nginx, crowd: crowdMicros, victims: victimsMicros };
  const machine = after.machine - before.machine;
  const other = machine - Object.values(parts).reduce((sum, micros) => sum + micros, 0);
  return { gateways: cores(parts.gateways), postgres: cores(parts.postgres), nginx: cores(parts.nginx), crowd: cores(parts.crowd), victims: cores(parts.victims), other: cores(other), machine: cores(machine) };
}

function rowOf(instances: number, phase: Phase, cpu: CpuSplit, result: Pick<CrowdResult, 'victims' | 'crowd'>): CrowdRow {
  const victims = Object.fromEntries(
    VICTIMS.map(([plan], i) => {
      const { statuses, latencies, sentAt, samples } = result.victims![i];
      const sorted = [...latencies].sort((a, b) => a - b);
      const settled = latencies.filter((_, n) => sentAt[n] >= SETTLED_AFTER_MS).sort((a, b) => a - b);
      const figures = { requests: latencies.length, statuses, samples, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), settledP99: percentile(settled, 99) };
      return [plan, figures];
    }),
  ) as CrowdRow['victims'];
  const crowd = result.crowd && { requests: Object.values(result.crowd.statuses).reduce((a, b) => a + b, 0), ...result.crowd };
  return { instances, phase, cpu, victims, crowd };
}

/**
 * Of the two shapes, as many aliases as the cost limit admits (asked of the gateway, which
 * reports each document's cost), the one that takes the longest for a FREE key (one statement
 * at a time, so its time is its statements' time): the median of 7 after 3 to warm up.
 */
async function mostExpensiveDocument(port: number) {
  const ask = async (document: CrowdDocument) => {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': crowdKey(0) },
      body: crowdRequestBody(document),
    });
    const body = (await response.json()) as { errors?: unknown[]; extensions?: { cost?: { requested: number; limit: number } } };
    if (!body.extensions?.cost) throw new Error(`crowd: expected the cost of ${crowdQuery(document)}, got ${response.status} ${JSON.stringify(body)}`);
    return { admitted: response.status === 200 && !body.errors, ...body.extensions.cost };
  };
  const candidates = [];
  for (const shape of ['count', 'page'] as const) {
    const one = await ask({ shape, aliases: 1 });
    let document: CrowdDocument = { shape, aliases: Math.max(1, Math.floor(one.limit / one.requested)) };
    while (!(await ask(document)).admitted && document.aliases > 1) document = { shape, aliases: document.aliases - 1 };
    const times: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const begin = performance.now();
      await ask(document);
      if (i >= 3) times.push(performance.now() - begin);
    }
    const { requested, limit } = await ask(document);
    candidates.push({ document, query: crowdQuery(document), cost: requested, limit, ms: times.sort((a, b) => a - b)[3] });
  }
  const chosen = candidates.reduce((a, b) => (b.ms > a.ms ? b : a));
  return { ...chosen, candidates: candidates.map(({ document, cost, ms }) => ({ ...document, cost, ms: Number(ms.toFixed(1)) })) };
}

export function crowdTable({ document, candidates, rows }: CrowdRun): string {
  const victim = (figures: VictimFigures) => `${statusList(figures.statuses)} | ${figures.p50} | ${figures.p90} | ${figures.p99} | ${figures.settledP99}`;
  const settled = `p99 from ${SETTLED_AFTER_MS / 1000} s`;
  const header = `| instances | phase | PRO statuses | PRO p50 ms | p90 | p99 | ${settled} | BUSINESS statuses | BUSINESS p50 ms | p90 | p99 | ${settled} | crowd requests | crowd statuses | crowd served |`;
  const lines = rows.map(
    (row) =>
      `| ${row.instances} | ${row.phase} | ${victim(row.victims.PRO)} | ${victim(row.victims.BUSINESS)} | ` +
      `${row.crowd?.requests ?? ''} | ${row.crowd ? statusList(row.crowd.statuses) : ''} | ${row.crowd?.served ?? ''} |`,
  );
  const cpuLines = rows.map(({ instances, phase, cpu }) =>
    `| ${instances} | ${phase} | ${cpu.gateways} | ${cpu.postgres} | ${THROUGH_NGINX ? cpu.nginx : ''} | ${cpu.crowd} | ${cpu.victims} | ${cpu.other} | ${cpu.machine} |`,
  );
  const times = candidates.map(({ shape, aliases, cost, ms }) => `${aliases} × ${shape}, cost ${cost}: ${ms} ms`).join('; ');
  return [
    `${THROUGH_NGINX ? 'every client through nginx (deploy/nginx/petstore.conf)' : 'every client straight to the instances'}; ` +
      `each crowd member: ${IN_FLIGHT} in flight per instance, sending ${document.query} (cost ${document.cost} of ${document.limit}; ` +
      `one request's time for a FREE key alone, of each shape at the most aliases admitted: ${times}); victims ${VICTIM_RATE} requests/s each`,
    '',
    header,
    `|${'---|'.repeat(15)}`,
    ...lines,
    '',
    `where the machine's CPU went, in cores (CPU seconds a second, of ${availableParallelism()}); victims on ${VICTIM_POOL || 'as many as they need'} kept-alive connections to each port:`,
    '',
    '| instances | phase | gateways | PostgreSQL | nginx | crowd clients | victim clients | other | machine |',
    `|${'---|'.repeat(9)}`,
    ...cpuLines,
    '',
    'what a refusal said, first of each status:',
    ...samplesOf(rows),
  ].join('\n');
}

function samplesOf(rows: CrowdRow[]): string[] {
  const seen = new Map<string, string>();
  for (const row of rows) {
    const sources = [...Object.entries(row.victims).map(([plan, figures]) => [plan, figures.samples] as const), ['crowd', row.crowd?.samples ?? {}] as const];
    for (const [who, samples] of sources) {
      for (const [status, body] of Object.entries(samples)) if (!seen.has(`${who} ${status}`)) seen.set(`${who} ${status}`, body);
    }
  }
  return [...seen].map(([label, body]) => `- ${label}: ${body.replace(/\s+/g, " ").trim()}`);
}

/** No victim refused, and their p99 within VICTIM_P99_MS, during either crowd on one and two instances. */
export function crowdVictimsMet({ rows }: CrowdRun): boolean {
  const during = rows.filter((row) => row.phase !== 'alone');
  return (
    during.length === 4 &&
    during.every((row) => Object.values(row.victims).every((figures) => Object.keys(figures.statuses).every((status) => status === '200') && figures.p99 <= VICTIM_P99_MS))
  );
}

/** The crowd never answered 500. */
export const crowdNever500 = ({ rows }: CrowdRun): boolean => rows.length > 0 && rows.every((row) => !row.crowd?.statuses['500']);
