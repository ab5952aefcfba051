import { Client } from 'pg';
import { postgresBinDir, type PostgresCluster, startPostgresCluster, startStandby } from '../helpers/postgres-cluster';
import { withDatabase } from '../helpers/database';
import { BENCH_DATABASE, createBenchDatabase } from './fixture';
import { backendCpu, cpuSpent } from './pg-cpu';
import { runLoad, startServer } from './processes';

/**
 * `BENCH_SCENARIOS=replicas`: Q1 and Q2 on the gateway against a primary alone, then against the
 * primary and one streaming replica (DATABASE_READ_URLS), both clusters of the bench's own on this
 * machine (initdb, pg_basebackup -R; PG_BIN or the newest under /usr/lib/postgresql). What the
 * replica takes off the primary is the primary's CPU per request (its backends' process time,
 * pg-cpu.ts), reported beside the replica's and the throughput.
 */
export async function runReplicas(env: Record<string, string>, seconds: number, warmUpSeconds: number): Promise<void> {
  const binDir = postgresBinDir();
  if (!binDir) throw new Error('replicas: PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) not found: set PG_BIN');
  let primary: PostgresCluster | undefined;
  let replica: PostgresCluster | undefined;
  const rows: string[] = [];
  try {
    primary = await startPostgresCluster(binDir, ['max_connections=200']);
    replica = await startStandby(binDir, primary, ['max_connections=200']);
    console.log('replicas: seeding the primary…');
    const primaryUrl = await createBenchDatabase(primary.url);
    const replicaUrl = withDatabase(replica.url, BENCH_DATABASE);
    await caughtUp(primary.url, replica.url);
    for (const [label, extra] of [
      ['primary alone', {}],
      ['primary + 1 replica', { DATABASE_READ_URLS: replicaUrl }],
    ] as [string, Record<string, string>][]) {
      const server = await startServer(`gateway, ${label}`, 'gateway.server.js', ['redis'], { ...env, ...extra, DATABASE_URL: primaryUrl });
      try {
        for (const [scenario, first] of [
          ['Q1', 0],
          ['Q2', 1_000_000],
        ] as [string, number][]) {
          await runLoad(server.port, scenario, 'gateway', warmUpSeconds, first);
          const [primaryBefore, replicaBefore] = [await backendCpu(primaryUrl), await backendCpu(replicaUrl)];
          const result = await runLoad(server.port, scenario, 'gateway', seconds, first + 100_000);
          const [primaryAfter, replicaAfter] = [await backendCpu(primaryUrl), await backendCpu(replicaUrl)];
          const perRequest = (micros: number) => (micros / 1000 / result.requests).toFixed(3);
          rows.push(
            `| ${scenario} | ${label} | ${Math.round(result.reqPerSec)} | ${result.p50} / ${result.p99} | ${perRequest(cpuSpent(primaryBefore, primaryAfter))} | ${extra.DATABASE_READ_URLS ? perRequest(cpuSpent(replicaBefore, replicaAfter)) : '–'} | ${result.errors + result.mismatches} |`,
          );
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    await replica?.remove();
    await primary?.remove();
  }
  console.log(
    [
      '| query | database | req/s | p50 / p99 ms | primary CPU ms/request | replica CPU ms/request | errors |',
      '|---|---|---|---|---|---|---|',
      ...rows.sort(),
    ].join('\n'),
  );
}

/** Waits until the replica has replayed everything the primary had written when asked. */
async function caughtUp(primaryUrl: string, replicaUrl: string): Promise<void> {
  const ask = async (url: string, text: string) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<{ at: string }>(text)).rows[0].at;
    } finally {
      await client.end();
    }
  };
  const target = await ask(primaryUrl, 'SELECT pg_current_wal_lsn()::text AS at');
  for (;;) {
    const behind = await ask(replicaUrl, `SELECT (pg_last_wal_replay_lsn() < '${target}'::pg_lsn)::text AS at`);
    if (behind === 'false') return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
