import 'reflect-metadata';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { generateApiKey } from '../../src/auth/key-secret';
import { startNginx } from '../helpers/nginx-server';
import { startPgBouncer } from '../helpers/pgbouncer-server';
import { type PostgresCluster, postgresBinDir, startPostgresCluster, startStandby } from '../helpers/postgres-cluster';
import { freePort, redisServer } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';
import { documented, type Exchange, Recorder, runLoad } from './clients';
import { loadBalancer } from './load-balancer';
import { memorySoak } from './memory';
import { npmStartNodeFlags } from '../helpers/npm-start-flags';

/**
 * npm run soak: three gateway instances behind a load balancer, on one PostgreSQL and one Redis,
 * under mixed load for about five minutes while Redis restarts, PostgreSQL restarts and an
 * instance is killed and started again; then the invariants of the scale-out issue are checked
 * and a summary printed. Loopback only. Exits 1 when an invariant fails.
 *
 *   --duration=SECONDS    default 300
 *   --redis-url=URL       use that Redis (its outage is then a CLIENT PAUSE) instead of a
 *                         redis-server of the soak's own on a free port
 *   --faults=LIST         default redis,postgres,instance; postgres restarts the machine's
 *                         cluster with pg_ctlcluster, so leave it out on a shared machine
 *   DATABASE_URL          the PostgreSQL server, default postgres://postgres@127.0.0.1:5432/postgres;
 *                         the soak creates a database of its own there and drops it at the end
 *   SOAK_PGBOUNCER=1      the instances reach it through a PgBouncer of the soak's own in
 *                         transaction mode (DATABASE_POOL_MODE=transaction), with fewer server
 *                         connections than the instances' pools hold; LISTEN and migrations direct
 *   SOAK_REPLICA=1        a primary and a streaming replica of the soak's own (initdb, pg_basebackup;
 *                         PG_BIN or the newest /usr/lib/postgresql) instead of DATABASE_URL's server,
 *                         the replica as DATABASE_READ_URLS; the faults add `replica` (stopped 10 s,
 *                         started again) and `postgres` restarts the soak's own primary
 *   SOAK_PROXY=nginx      the shipped deploy/nginx/petstore.conf (startNginx) in front of the
 *                         instances instead of the soak's Node load balancer, the instances run
 *                         with TRUST_PROXY=127.0.0.1 and count clients by nginx's X-Forwarded-For;
 *                         nginx passes a request to the next instance while one refuses connections,
 *                         but not a POST that was in flight on the killed instance: that one's 503
 *                         SERVICE_UNAVAILABLE is allowed (every client of the soak has a key, so none
 *                         needs an address of its own)
 *
 * The summary adds latencies by kind of client and each instance's RSS every 15 s.
 *
 * --scenario memory runs the memory soak of memory.ts instead.
 */

const INSTANCES = 3;
const FREE_PER_MINUTE = 60;
const RSS_EVERY_MS = 15_000;

interface Fault {
  name: string;
  startedAt: number;
  /** When the fault was over: Redis or PostgreSQL running again, the instance started again. */
  endedAt?: number;
  /** When every instance answered /readyz as before the fault. */
  recoveredAt?: number;
  /** Responses from `startedAt` up to here may be 503 (PostgreSQL only). */
  graceUntil?: number;
  /** Reads by where they went, from `startedAt` to `recoveredAt` (replica only). */
  reads?: ReadsServed;
}

/** What sits in front of the instances: its address, and the requests it re-sent when it knows them. */
interface Front {
  name: string;
  url: string;
  retried?: number;
  close(): Promise<void>;
}

/** Each instance's RSS in MB at `seconds` into the load; undefined while it is down. */
interface RssSample {
  seconds: number;
  rssMb: (number | undefined)[];
}

/** petstore_db_reads_total by served_by, summed over instances. */
interface ReadsServed {
  primary: number;
  replica: number;
}

/** `--name=value` or `--name value`. */
function flag(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  if (at >= 0) return process.argv[at + 1];
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

async function main(): Promise<void> {
  if (flag('scenario') === 'memory') process.exit((await memorySoak(flag)) ? 0 : 1);
  const duration = Number(flag('duration') ?? 300) * 1000;
  const withReplica = process.env.SOAK_REPLICA === '1';
  const throughNginx = process.env.SOAK_PROXY === 'nginx';
  if (process.env.SOAK_PROXY && !throughNginx) throw new Error(`SOAK_PROXY=${process.env.SOAK_PROXY}: expected nginx or nothing`);
  const faults = (flag('faults') ?? `redis,postgres,instance${withReplica ? ',replica' : ''}`).split(',');
  // SOAK_REPLICA=1: a primary and its streaming replica of the soak's own.
  let primary: PostgresCluster | undefined;
  let replica: PostgresCluster | undefined;
  if (withReplica) {
    const binDir = postgresBinDir();
    if (!binDir) throw new Error('SOAK_REPLICA=1 needs the PostgreSQL server binaries (PG_BIN)');
    primary = await startPostgresCluster(binDir);
    replica = await startStandby(binDir, primary);
  }
  const serverUrl = primary?.url ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const run = randomBytes(4).toString('hex');
  const logDir = mkdtempSync(join(tmpdir(), 'petstore-soak-'));

  // Redis: the soak's own, unless told otherwise.
  const ownRedis = flag('redis-url') ? undefined : await redisServer();
  await ownRedis?.start();
  const redisUrl = flag('redis-url') ?? (ownRedis?.url as string);

  // PostgreSQL: a database of the soak's own on the machine's server.
  const database = `soak_${run}`;
  await admin(serverUrl, `CREATE DATABASE ${database}`);
  const databaseUrl = withDatabase(serverUrl, database);
  // 3 instances × 5 connections share 6 server sessions.
  const bouncer = process.env.SOAK_PGBOUNCER === '1' ? await startPgBouncer(serverUrl, { serverPoolSize: 6 }) : undefined;
  const pooled = bouncer && { DATABASE_URL: bouncer.url(database), DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: databaseUrl };

  const adminKey = generateApiKey();
  const ports = await Promise.all(Array.from({ length: INSTANCES }, () => freePort()));
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `soak-${run}`,
    ADMIN_API_KEY: adminKey,
    DATABASE_POOL_SIZE: '5',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    // nginx's X-Forwarded-For names the client (docs/scaling-out.md "Behind a reverse proxy").
    ...(throughNginx && { TRUST_PROXY: '127.0.0.1' }),
    ...pooled,
    ...(replica && { DATABASE_READ_URLS: withDatabase(replica.url, database) }),
  };
  const children: (ChildProcess | undefined)[] = [];
  const startInstance = async (i: number) => {
    const child = spawn(process.execPath, [...npmStartNodeFlags(), 'dist/src/main.js'], {
      env: { ...env, PORT: String(ports[i]) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(join(logDir, `instance-${i}.log`), { flags: 'a' });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    children[i] = child;
    await waitFor(async () => (await readiness(ports[i]))?.status === 200, 30_000, `instance ${i} to be ready`);
  };

  const loadAtStart = loadavg();
  const lb = await front(throughNginx, ports);
  const recorder = new Recorder();
  const injected: Fault[] = [];
  const rss: RssSample[] = [];
  let failed = false;
  try {
    await startInstance(0); // migrates the database
    await Promise.all([1, 2].map(startInstance));

    const fixture = await seed(lb.url, adminKey);
    const started = Date.now();
    let stopping = false;
    const readsBeforeRestart: ReadsServed = { primary: 0, replica: 0 };
    const load = runLoad({ url: lb.url, recorder, stop: () => stopping, ...fixture });
    const sampling = sampleRss(children, started, rss, () => stopping);

    const allReady = (check: (body: Record<string, unknown>) => boolean) =>
      waitFor(async () => (await Promise.all(ports.map(readiness))).every((r) => r?.status === 200 && check(r.body)), 60_000, 'every instance ready');
    const at = async (share: number) => {
      const wait = started + share * duration - Date.now();
      if (wait > 0) await sleep(wait);
    };

    if (faults.includes('redis')) {
      await at(0.15);
      const fault: Fault = { name: ownRedis ? 'Redis killed, restarted after 10 s' : 'Redis paused 10 s (CLIENT PAUSE)', startedAt: Date.now() };
      injected.push(fault);
      if (ownRedis) {
        await ownRedis.kill();
        await sleep(10_000);
        await ownRedis.start();
      } else {
        const client = new Redis(redisUrl);
        await client.call('CLIENT', 'PAUSE', '10000', 'ALL');
        client.disconnect();
        await sleep(10_000);
      }
      fault.endedAt = Date.now();
      await allReady((body) => body.redis === 'ok');
      fault.recoveredAt = Date.now();
    }
    if (faults.includes('postgres')) {
      await at(0.4);
      const fault: Fault = { name: `PostgreSQL restarted (${primary ? 'the primary, pg_ctl restart -m fast' : 'pg_ctlcluster restart'})`, startedAt: Date.now() };
      injected.push(fault);
      if (primary) {
        await primary.restart('fast');
      } else {
        const version = readdirSync('/etc/postgresql')[0];
        execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart'], { stdio: 'ignore' });
      }
      fault.endedAt = Date.now();
      await allReady(() => true);
      fault.recoveredAt = Date.now();
      fault.graceUntil = fault.recoveredAt + 2_000;
    }
    if (replica && faults.includes('replica')) {
      await at(0.5);
      const fault: Fault = { name: 'replica stopped (fast), started again after 10 s', startedAt: Date.now() };
      injected.push(fault);
      const before = await readsServed(ports);
      await replica.stop('fast');
      await sleep(10_000);
      await replica.start();
      fault.endedAt = Date.now();
      // Recovered once every instance's poller sees the replica caught up and takes reads on it again.
      await allReady((body) => (body.replicas as { state: string }[]).every((each) => each.state === 'ok'));
      fault.recoveredAt = Date.now();
      const after = await readsServed(ports);
      fault.reads = { primary: after.primary - before.primary, replica: after.replica - before.replica };
    }
    if (faults.includes('instance')) {
      await at(0.65);
      const fault: Fault = { name: 'instance 2 killed (SIGKILL), started again after 5 s', startedAt: Date.now() };
      injected.push(fault);
      // Its counters restart with it: keep what it had counted.
      if (withReplica) addReads(readsBeforeRestart, await readsServed([ports[1]]));
      children[1]?.kill('SIGKILL');
      await sleep(5_000);
      fault.endedAt = Date.now();
      await startInstance(1);
      fault.recoveredAt = Date.now();
    }

    await at(1);
    stopping = true;
    await Promise.all([load, sampling]);
    const finalReady = await Promise.all(ports.map(readiness));
    const reads = withReplica ? addReads(readsBeforeRestart, await readsServed(ports)) : undefined;
    failed = !(await report({ databaseUrl, recorder, faults: injected, finalReady, front: lb, throughNginx, elapsed: Date.now() - started, reads, rss, loadAtStart }));
  } finally {
    await lb.close();
    for (const child of children) child?.kill('SIGTERM');
    await sleep(1_000);
    await bouncer?.stop();
    await admin(serverUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await ownRedis?.kill();
    await replica?.remove();
    await primary?.remove();
    console.log(`instance logs: ${logDir}`);
  }
  process.exit(failed ? 1 : 0);
}

/** nginx with the shipped configuration, or the soak's own load balancer, in front of `ports`. */
async function front(throughNginx: boolean, ports: number[]): Promise<Front> {
  if (throughNginx) {
    const nginx = await startNginx(ports);
    return { name: 'nginx (deploy/nginx/petstore.conf)', url: nginx.url, close: () => nginx.stop() };
  }
  const balancer = await loadBalancer(() => ports);
  return {
    name: 'the Node load balancer',
    url: balancer.url,
    get retried() {
      return balancer.retried;
    },
    close: () => balancer.close(),
  };
}

/** Each running instance's RSS (VmRSS of /proc), every RSS_EVERY_MS until `stop`, and once at the end. */
async function sampleRss(children: (ChildProcess | undefined)[], started: number, into: RssSample[], stop: () => boolean): Promise<void> {
  const take = () =>
    into.push({
      seconds: Math.round((Date.now() - started) / 1000),
      rssMb: children.map((child) => {
        if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return undefined;
        try {
          const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          return kb ? Math.round(Number(kb[1]) / 1024) : undefined;
        } catch {
          return undefined;
        }
      }),
    });
  take();
  while (!stop()) {
    const next = started + into.length * RSS_EVERY_MS;
    while (!stop() && Date.now() < next) await sleep(Math.min(1_000, next - Date.now()));
    take();
  }
}

/** Keys, a category and eight stocked pets, created through the API as an operator would. */
async function seed(url: string, adminKey: string) {
  const call = async (query: string, variables?: Record<string, unknown>) => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': adminKey },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: Record<string, Record<string, string>>; errors?: unknown };
    if (!body.data || body.errors) throw new Error(`expected the seed to succeed, got ${JSON.stringify(body)}`);
    return body.data;
  };
  const key = async (plan: string) =>
    (await call('mutation($p: Plan!) { createApiKey(input: { name: "soak", plan: $p }) { key } }', { p: plan })).createApiKey.key;
  const categoryId = (await call('mutation { createCategory(input: { name: "Soak" }) { id } }')).createCategory.id;
  const petIds: string[] = [];
  for (let i = 0; i < 8; i += 1) {
    const petId = (await call('mutation($c: ID!, $n: String!) { createPet(input: { name: $n, categoryId: $c }) { id } }', { c: categoryId, n: `Soak ${i}` })).createPet.id;
    await call('mutation($p: ID!) { updateInventory(petId: $p, input: { quantity: 200 }) { quantity } }', { p: petId });
    petIds.push(petId);
  }
  return {
    petIds,
    readerKeys: [await key('BUSINESS'), await key('BUSINESS')],
    orderKeys: [await key('PRO'), await key('PRO'), await key('PRO'), await key('PRO'), await key('PRO'), await key('PRO')],
    limitedKeys: [await key('FREE'), await key('FREE'), await key('FREE')],
  };
}

interface Outcome {
  databaseUrl: string;
  recorder: Recorder;
  faults: Fault[];
  finalReady: ({ status: number } | undefined)[];
  front: Front;
  throughNginx: boolean;
  elapsed: number;
  reads: ReadsServed | undefined;
  rss: RssSample[];
  loadAtStart: number[];
}

/** Checks the invariants, prints the summary; true when all hold. */
async function report({ databaseUrl, recorder, faults, finalReady, front, throughNginx, elapsed, reads, rss, loadAtStart }: Outcome): Promise<boolean> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const stock = await db.query<{ pet_id: string; quantity: number; taken: string }>(
    `SELECT i.pet_id, i.quantity, COALESCE((SELECT SUM(o.quantity) FROM orders o WHERE o.pet_id = i.pet_id), 0) AS taken FROM inventory_items i`,
  );
  const stored = await db.query<{ id: string; pet_id: string; quantity: number }>('SELECT id, pet_id, quantity FROM orders');
  const unkeyed = await db.query<{ n: string }>(
    'SELECT COUNT(*) AS n FROM orders o WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.order_id = o.id)',
  );
  const shared = await db.query<{ n: string }>('SELECT COUNT(*) AS n FROM (SELECT order_id FROM idempotency_keys WHERE order_id IS NOT NULL GROUP BY order_id HAVING COUNT(*) > 1) d');
  await db.end();

  const byId = new Map(stored.rows.map((row) => [String(row.id), row]));
  const missing = [...recorder.orders.values()].filter((told) => {
    const row = byId.get(told.id);
    return !row || String(row.pet_id) !== told.petId || row.quantity !== told.quantity;
  });

  const redisFault = faults.find((fault) => fault.name.startsWith('Redis'));
  const pgFault = faults.find((fault) => fault.name.startsWith('PostgreSQL'));
  const replicaFault = faults.find((fault) => fault.name.startsWith('replica'));
  // Windows overlapping a Redis outage may admit a quota per instance (docs/contract.md §5).
  const duringRedisOutage = (reset: number) =>
    !!redisFault && reset * 1000 > redisFault.startedAt && (reset - 60) * 1000 < (redisFault.recoveredAt ?? Infinity);
  const windows = new Map<string, number>();
  for (const admission of recorder.admissions) {
    const id = `${admission.client}@${admission.windowReset}`;
    windows.set(id, (windows.get(id) ?? 0) + 1);
  }
  const overAdmitted = [...windows].filter(([id, count]) => {
    const reset = Number(id.split('@')[1]);
    return count > (duringRedisOutage(reset) ? FREE_PER_MINUTE * INSTANCES : FREE_PER_MINUTE);
  });
  const busiest = Math.max(0, ...[...windows].filter(([id]) => !duringRedisOutage(Number(id.split('@')[1]))).map(([, n]) => n));

  const instanceFault = faults.find((fault) => fault.name.startsWith('instance'));
  const inPgOutage = (at: number) => !!pgFault && at >= pgFault.startedAt && at <= (pgFault.graceUntil ?? Infinity);
  // nginx re-sends no POST that reached the killed instance (it may have been served): its 503 is the answer.
  const inFlightOnKilled = (exchange: Exchange) =>
    throughNginx && !!instanceFault && exchange.code === 'SERVICE_UNAVAILABLE' && exchange.sentAt <= instanceFault.startedAt && exchange.at >= instanceFault.startedAt;
  const allowed503 = (exchange: Exchange) => inPgOutage(exchange.at) || inFlightOnKilled(exchange);
  const undocumented = recorder.exchanges.filter((exchange) => !documented(exchange) || (exchange.status === 503 && !allowed503(exchange)));
  const killed503 = recorder.exchanges.filter(inFlightOnKilled).length;

  const statuses = new Map<number, number>();
  for (const exchange of recorder.exchanges) statuses.set(exchange.status, (statuses.get(exchange.status) ?? 0) + 1);

  const checks: [string, boolean, string][] = [
    ['stock never below 0', stock.rows.every((row) => row.quantity >= 0), `min ${Math.min(...stock.rows.map((row) => row.quantity))}`],
    [
      'stock taken = quantities of stored orders',
      stock.rows.every((row) => 200 - row.quantity === Number(row.taken)),
      `${stock.rows.reduce((sum, row) => sum + Number(row.taken), 0)} units in ${stored.rowCount} orders`,
    ],
    ['no order the client was told about is missing', missing.length === 0, `${recorder.orders.size} told, ${missing.length} missing`],
    [
      'no duplicate order for one idempotency key',
      recorder.conflicting.length === 0 && Number(unkeyed.rows[0].n) === 0 && Number(shared.rows[0].n) === 0,
      `${recorder.conflicting.length} keys answered twice differently, ${unkeyed.rows[0].n} orders without a key`,
    ],
    [
      'admitted per minute window ≤ limit (× instances while Redis was down)',
      overAdmitted.length === 0,
      `${windows.size} windows, busiest outside outages ${busiest}/${FREE_PER_MINUTE}`,
    ],
    [
      `every response 2xx, a §6 4xx, or 503 during the PostgreSQL outage${throughNginx ? ' or in flight on the killed instance' : ''}`,
      undocumented.length === 0 && recorder.noAnswer === 0,
      `${undocumented.length} others, ${recorder.noAnswer} unanswered${throughNginx ? `, ${killed503} 503 in flight on the killed instance` : ''}${
        undocumented.length ? `: ${JSON.stringify(undocumented.slice(0, 3))}` : ''
      }`,
    ],
    ...(replicaFault
      ? [
          ((): [string, boolean, string] => {
            const during = recorder.exchanges.filter((exchange) => exchange.at >= replicaFault.startedAt && exchange.at <= (replicaFault.recoveredAt ?? Infinity));
            const errors = during.filter((exchange) => exchange.status >= 500);
            const reads = replicaFault.reads ? ` (reads: ${replicaFault.reads.primary} on the primary, ${replicaFault.reads.replica} on the replica)` : '';
            return ['no error while the replica was down or catching up', errors.length === 0, `${during.length} requests${reads}, ${errors.length} errors`];
          })(),
        ]
      : []),
    ['every instance answers /readyz 200 at the end', finalReady.every((r) => r?.status === 200), finalReady.map((r) => r?.status ?? 'none').join(', ')],
  ];

  const through = `${process.env.SOAK_PGBOUNCER === '1' ? ' behind PgBouncer (transaction mode)' : ''}${reads ? ', a primary and a streaming replica' : ''}`;
  const resent = front.retried === undefined ? "nginx's passes to the next instance not counted" : `${front.retried} re-sent by the load balancer after an instance failed`;
  console.log(`\nSoak: ${INSTANCES} instances${through} behind ${front.name}, ${(elapsed / 1000).toFixed(0)} s, ${recorder.exchanges.length} requests (${resent})`);
  const load = (figures: number[]) => figures.map((n) => n.toFixed(2)).join(', ');
  console.log(`load average (1, 5, 15 min): ${load(loadAtStart)} at the start, ${load(loadavg())} at the end\n`);
  console.log('| status | requests |\n|---|---|');
  for (const [status, count] of [...statuses].sort(([a], [b]) => a - b)) console.log(`| ${status} | ${count} |`);
  console.log(`\norders placed: ${stored.rowCount} (told to clients: ${recorder.orders.size})\n`);
  if (reads) console.log(`reads served by the replica: ${reads.replica}, by the primary: ${reads.primary} (petstore_db_reads_total)\n`);
  console.log(latencyTable(recorder.exchanges));
  // Recovery: from the end of the fault until every instance's /readyz was as before it.
  console.log('| fault | at | lasted | recovered after | answers from its start to recovery |\n|---|---|---|---|---|');
  const t0 = recorder.exchanges[0]?.at ?? 0;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  for (const fault of faults) {
    const ended = fault.endedAt ?? fault.startedAt;
    const recovery = fault.recoveredAt ? seconds(fault.recoveredAt - ended) : 'never';
    const during = recorder.exchanges.filter((exchange) => exchange.at >= fault.startedAt && exchange.at <= (fault.recoveredAt ?? Infinity));
    console.log(`| ${fault.name} | ${seconds(fault.startedAt - t0)} | ${seconds(ended - fault.startedAt)} | ${recovery} | ${statusList(during)} |`);
  }
  console.log(`\n| s | ${rss[0]?.rssMb.map((_, i) => `instance ${i + 1} RSS MB`).join(' | ')} |\n|${'---|'.repeat(INSTANCES + 1)}`);
  for (const sample of rss) console.log(`| ${sample.seconds} | ${sample.rssMb.map((mb) => mb ?? 'down').join(' | ')} |`);
  console.log('\n| invariant | holds | detail |\n|---|---|---|');
  for (const [name, holds, detail] of checks) console.log(`| ${name} | ${holds ? 'yes' : 'NO'} | ${detail} |`);
  return checks.every(([, holds]) => holds);
}

/** `200 × 1234, 503 × 2`: the answers' statuses, by count. */
function statusList(exchanges: Exchange[]): string {
  const counts = new Map<number, number>();
  for (const exchange of exchanges) counts.set(exchange.status, (counts.get(exchange.status) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a - b).map(([status, count]) => `${status} × ${count}`).join(', ') || 'none';
}

/** Latency percentiles, from sending a request to reading its whole answer, by kind of client. */
function latencyTable(exchanges: Exchange[]): string {
  const kinds = new Map<string, number[]>();
  for (const exchange of exchanges) {
    const kind = exchange.client.startsWith('limited') ? 'FREE key past its quota' : exchange.client;
    const times = kinds.get(kind) ?? [];
    times.push(exchange.at - exchange.sentAt);
    kinds.set(kind, times);
  }
  const at = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  const lines = [...kinds].map(([kind, times]) => {
    const sorted = times.sort((a, b) => a - b);
    return `| ${kind} | ${sorted.length} | ${at(sorted, 50)} | ${at(sorted, 90)} | ${at(sorted, 99)} | ${sorted[sorted.length - 1]} |`;
  });
  return ['| client | requests | p50 ms | p90 ms | p99 ms | max ms |', '|---|---|---|---|---|---|', ...lines, ''].join('\n');
}

async function readiness(port: number): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3_000) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** petstore_db_reads_total{served_by} of each instance's /metrics, summed. */
async function readsServed(ports: number[]): Promise<ReadsServed> {
  const sum: ReadsServed = { primary: 0, replica: 0 };
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(3_000) })).text();
    for (const [, servedBy, value] of text.matchAll(/^petstore_db_reads_total\{served_by="(primary|replica)"\} (\S+)$/gm)) {
      sum[servedBy as keyof ReadsServed] += Number(value);
    }
  }
  return sum;
}

function addReads(into: ReadsServed, more: ReadsServed): ReadsServed {
  into.primary += more.primary;
  into.replica += more.replica;
  return into;
}

function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  // After a restart the server may take a moment to accept connections again.
  for (let attempt = 0; ; attempt += 1) {
    const client = new Client({ connectionString: serverUrl });
    try {
      await client.connect();
      await client.query(sql);
      return;
    } catch (error) {
      if (attempt >= 20) throw error;
      await sleep(500);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
