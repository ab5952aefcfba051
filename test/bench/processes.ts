import { type ChildProcess, execFile, execFileSync, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { npmStartNodeFlags } from '../helpers/npm-start-flags';
import type { ServerStats } from './server-stats';

export interface BenchServer {
  name: string;
  port: number;
  stats(): Promise<ServerStats>;
  stop(): Promise<void>;
}

/**
 * BENCH_CPU_PROF_DIR: every gateway contender runs under Node's CPU profiler, each writing its
 * profile there (a `.cpuprofile` named after its process) when it stops.
 */
function cpuProfileFlags(): string[] {
  const directory = process.env.BENCH_CPU_PROF_DIR;
  return directory ? ['--cpu-prof', `--cpu-prof-dir=${directory}`] : [];
}

/** The bench's gateway script of another checkout whose bench is built, as startServer takes it. */
export function gatewayScriptOf(checkout: string): string {
  return relative(__dirname, join(checkout, 'dist', 'test', 'bench', 'gateway.server.js'));
}

/**
 * Starts a bench server script (compiled, relative to this file) and waits for its port; a gateway
 * runs with `npm start`'s Node flags (unless `npmStartFlags` is false), then `extraNodeFlags`.
 */
export async function startServer(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  extraNodeFlags: string[] = [],
  { npmStartFlags = true } = {},
): Promise<BenchServer> {
  // Only a contender given OTEL_* variables traces, whatever the shell running the bench has set.
  const untraced = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const child: ChildProcess = fork(join(__dirname, script), args, {
    env: { ...untraced, ...env },
    execArgv: basename(script) === 'gateway.server.js' ? [...process.execArgv, ...(npmStartFlags ? npmStartNodeFlags() : []), ...extraNodeFlags, ...cpuProfileFlags()] : process.execArgv,
    // Their logs would drown the report; errors still show.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port?: number }) => (message.port ? resolve(message.port) : reject(new Error(`${name}: ${JSON.stringify(message)}`))));
    child.once('exit', (code) => reject(new Error(`expected ${name} to start, got exit ${code}`)));
  });
  return {
    name,
    port,
    stats: () =>
      new Promise((resolve) => {
        child.once('message', (message: { stats: ServerStats }) => resolve(message.stats));
        child.send('stats');
      }),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

/**
 * `count` fresh gateway instances of one deployment, named `<label> A`, `<label> B`…: limiter on
 * Redis under one prefix of their own, so that they share limits with each other and nothing else.
 */
export async function startDeployment(label: string, count: number, env: Record<string, string>): Promise<BenchServer[]> {
  const shared = { ...env, BENCH_REDIS_PREFIX: `bench:${label.replace(/\W+/g, '-')}:${Date.now()}` };
  const instances: BenchServer[] = [];
  for (let i = 0; i < count; i += 1) instances.push(await startServer(`${label} ${String.fromCharCode(65 + i)}`, 'gateway.server.js', ['redis'], shared));
  return instances;
}

export interface LoadResult {
  requests: number;
  reqPerSec: number;
  p50: number;
  p90: number;
  p99: number;
  errors: number;
  mismatches: number;
  /** Responses with status 503 SERVICE_UNAVAILABLE. */
  unavailable: number;
  /** Responses by HTTP status. */
  statuses: Record<string, number>;
  /** Responses by X-Cache (HIT, MISS, BYPASS, `none`), for the scenarios that count it. */
  cache?: Record<string, number>;
}

/**
 * Drives one server with autocannon from a separate process, over `connections` connections:
 * each sends its next request once answered, or, given `rate`, all of them together at most
 * `rate` requests a second.
 */
export function runLoad(
  port: number,
  scenario: string,
  target: string,
  seconds: number,
  firstRequest: number,
  connections = 10,
  rate?: number,
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(__dirname, 'load.worker.js'), String(port), scenario, target, String(seconds), String(firstRequest), String(connections), ...(rate ? [String(rate)] : [])],
      { maxBuffer: 1 << 20 },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as LoadResult)),
    );
  });
}

/** The peer's own package (test/bench/peer), installed from its lock file on first use only. */
export function installPeer(): void {
  const directory = join(__dirname, '..', '..', '..', 'test', 'bench', 'peer');
  if (existsSync(join(directory, 'node_modules', 'postgraphile'))) return;
  console.log('installing the peer, PostGraphile v5 (npm ci --prefix test/bench/peer)…');
  execFileSync('npm', ['ci', '--prefix', directory, '--no-audit', '--no-fund'], { stdio: 'inherit' });
}
