import type { DataSource } from 'typeorm';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { runUnnamedStatements } from '../sql/prepared';
import { guardCheckouts, poolOf } from '../sql/pool';
import { ReadReplicas, type Replica } from '../sql/read-replicas';
import { createDataSource } from './data-source';

type ReplicaSettings = 'databaseReadUrls' | 'databaseReadMaxLagMs' | 'databasePoolSize' | 'databaseStatementTimeoutMs' | 'databaseConnectTimeoutMs' | 'databasePoolMode';

/**
 * The replicas of DATABASE_READ_URLS, each pooled as DATABASE_URL is (same size, timeouts and pool
 * mode, so a replica behind PgBouncer too) with one more connection for the poller, and their
 * poller, started. A replica that cannot be
 * reached now is no reason not to start: it takes no reads until a poll reaches it. Nothing is
 * migrated there: a replica replays the primary's schema.
 */
export async function openReadReplicas(config: Pick<Config, ReplicaSettings>, primary: DataSource, logger: Logger): Promise<ReadReplicas | undefined> {
  if (config.databaseReadUrls.length === 0) return undefined;
  const pooled = (url: string, poolSize: number) =>
    createDataSource({
      url,
      poolSize,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      poolMode: config.databasePoolMode,
    });
  const replicas: Replica[] = config.databaseReadUrls.map((url) => ({
    name: nameOf(url),
    dataSource: pooled(url, config.databasePoolSize),
    probe: pooled(url, 1),
    state: 'starting',
    lagMs: undefined,
    replayLsn: 0n,
  }));
  const transactionMode = config.databasePoolMode === 'transaction';
  const readReplicas = new ReadReplicas(primary, replicas, {
    maxLagMs: config.databaseReadMaxLagMs,
    connect: async ({ dataSource, probe }) => {
      for (const source of [dataSource, probe]) if (!source.isInitialized) await connect(source, transactionMode);
    },
    onStateChange: (replica, previous, reason) => {
      const line = { replica: replica.name, from: previous, to: replica.state, lagMs: replica.lagMs, reason };
      if (replica.state === 'ok') logger.info(line, 'read replica takes reads');
      else logger.warn(line, `read replica takes no reads: ${replica.state}`);
    },
  });
  await readReplicas.start();
  return readReplicas;
}

async function connect(dataSource: DataSource, transactionMode: boolean): Promise<void> {
  await dataSource.initialize();
  const pool = poolOf(dataSource);
  guardCheckouts(pool);
  if (transactionMode) runUnnamedStatements(pool);
}

/** host:port/database of a URL, without its credentials. */
function nameOf(url: string): string {
  const { hostname, port, pathname } = new URL(url);
  return `${hostname}:${port || '5432'}${pathname}`;
}
