import { randomBytes } from 'node:crypto';
import { generateApiKey } from '../../src/auth/key-secret';
import { openDatabase } from '../../src/db/database';
import { IN_MEMORY } from '../../src/db/in-memory';
import { parseLsn } from '../../src/sql/lsn';
import { startTestApp, type TestApp, type TestAppOptions } from './app';
import type { TestDatabase } from './database';
import { postgresBinDir, type PostgresCluster, startPostgresCluster, startStandby } from './postgres-cluster';
import { metric } from './metrics';
import { describeWhen } from './services';
import { waitFor } from './wait';

/**
 * Services mode (DATABASE_URL) starts a primary and a streaming replica of its own with the
 * server's binaries (PG_BIN, or the newest under /usr/lib/postgresql); embedded, these suites show
 * as skipped. Without the binaries in services mode they fail, saying so.
 */
export const withReplication = describeWhen(!process.env.DATABASE_URL && 'DATABASE_URL (services mode: it starts a primary and a replica of its own)');

/** What the replica is kept behind by (recovery_min_apply_delay). */
export const APPLY_DELAY_MS = 500;

export interface Replication {
  primary: PostgresCluster;
  replica: PostgresCluster;
  /** With `cascade`: the standby between the primary and the replica, which the replica streams from. */
  relay?: PostgresCluster;
  /** The primary, opened and migrated as a gateway opens it; the instances share it. */
  db: TestDatabase;
  /** Two instances of one deployment: the same primary, replica and Redis prefix. */
  instances: [TestApp, TestApp];
  /** One more instance of the deployment, `env` over the others' (closed with them). */
  startInstance(env: Record<string, string>, options?: Pick<TestAppOptions, 'logger'>): Promise<TestApp>;
  close(): Promise<void>;
}

/**
 * A primary, its replica APPLY_DELAY_MS behind, and two gateway instances reading from it. With
 * `cascade`, the replica streams from a standby of the primary (the relay) instead of the primary.
 */
export async function startReplication(env: Record<string, string> = {}, { cascade = false } = {}): Promise<Replication> {
  const binDir = postgresBinDir();
  if (!binDir) throw new Error('PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) not found: set PG_BIN or apt-get install postgresql');
  const primary = await startPostgresCluster(binDir);
  const relay = cascade ? await startStandby(binDir, primary) : undefined;
  const replica = await startStandby(binDir, relay ?? primary, [`recovery_min_apply_delay=${APPLY_DELAY_MS}ms`]);
  const database = await openDatabase({ databaseUrl: primary.url, pgliteDataDir: IN_MEMORY });
  const db: TestDatabase = { ...database, url: primary.url };
  const prefix = `test:${randomBytes(6).toString('hex')}`;
  // One admin key for the deployment: each instance makes sure of its ADMIN_API_KEY at start-up.
  const gatewayEnv = { DATABASE_URL: primary.url, DATABASE_READ_URLS: replica.url, ADMIN_API_KEY: generateApiKey(), ...env };
  const instances = [await startTestApp(gatewayEnv, { db, limiterKeyPrefix: prefix }), await startTestApp(gatewayEnv, { db, limiterKeyPrefix: prefix })] as [TestApp, TestApp];
  const more: TestApp[] = [];
  return {
    primary,
    replica,
    relay,
    db,
    instances,
    async startInstance(env, options = {}) {
      const instance = await startTestApp({ ...gatewayEnv, ...env }, { ...options, db, limiterKeyPrefix: prefix });
      more.push(instance);
      return instance;
    },
    async close() {
      for (const instance of [...instances, ...more]) await instance.close();
      await db.close();
      await replica.remove();
      await relay?.remove();
      await primary.remove();
    },
  };
}

/** The instance's read requests so far, by where they were served. */
export async function readsServed(t: TestApp): Promise<{ primary: number; replica: number }> {
  return {
    primary: await metric(t, 'petstore_db_reads_total', { served_by: 'primary' }),
    replica: await metric(t, 'petstore_db_reads_total', { served_by: 'replica' }),
  };
}

/** Waits until the replica, as `t` last polled it, takes reads and has replayed `position` (an X-Read-After). */
export async function replicaAt(t: TestApp, position?: string, withinMs = 20_000): Promise<void> {
  const wanted = position === undefined ? 0n : (parseLsn(position) as bigint);
  await waitFor(
    async () => {
      const response = await fetch(`${t.url}/readyz`);
      const { replicas } = (await response.json()) as { replicas: { state: string; replayLsn: string | null }[] };
      return replicas.every(({ state, replayLsn }) => state === 'ok' && replayLsn !== null && (parseLsn(replayLsn) as bigint) >= wanted);
    },
    withinMs,
    'the replica to take reads, caught up',
  );
}
