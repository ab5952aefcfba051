import { Client } from 'pg';
import { processCpu } from './machine-cpu';

/** CPU microseconds of each backend process serving a database, by pid. */
export type BackendCpu = Map<number, number>;

/**
 * The PostgreSQL side of a request's cost: the CPU time (utime + stime, /proc/<pid>/stat) of the
 * backends connected to the database, read on the machine PostgreSQL runs on. Empty where /proc
 * does not show them (a remote server): the bench then reports no figure.
 */
export async function backendCpu(databaseUrl: string): Promise<BackendCpu> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    const cpu: BackendCpu = new Map();
    for (const { pid } of rows) {
      const micros = processCpu(pid)?.micros;
      if (micros !== undefined) cpu.set(pid, micros);
    }
    return cpu;
  } finally {
    await client.end();
  }
}

/**
 * The CPU the backends spent between two readings, in microseconds: a backend that appeared
 * counts from zero; one that left is not counted (idle connections of other servers closing).
 */
export function cpuSpent(before: BackendCpu, after: BackendCpu): number {
  if (after.size === 0) return NaN;
  let micros = 0;
  for (const [pid, now] of after) micros += now - (before.get(pid) ?? 0);
  return micros;
}

/**
 * How many checkpoints the PostgreSQL server has started (timed or requested, by any database's
 * work: another database's DROP DATABASE asks for one at once). A checkpoint's flush stalls
 * commits everywhere, so a latency measured across one says more of the server than of a gateway.
 */
export async function checkpointCount(databaseUrl: string): Promise<number> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>('SELECT checkpoints_timed + checkpoints_req AS count FROM pg_stat_bgwriter');
    return Number(rows[0].count);
  } catch {
    // PostgreSQL 17 counts them in pg_stat_checkpointer instead.
    const { rows } = await client.query<{ count: string }>('SELECT num_timed + num_requested AS count FROM pg_stat_checkpointer');
    return Number(rows[0].count);
  } finally {
    await client.end();
  }
}
