import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { redisServer, type RedisServer } from './redis-server';
import { waitFor } from './wait';

/** A node's failure is noticed after this long; a replica then takes over within a few seconds. */
const NODE_TIMEOUT_MS = 1_000;

export interface RedisCluster {
  nodes: RedisServer[];
  /** REDIS_CLUSTER_NODES for the masters. */
  seeds: string;
  /** The node serving `key`'s slot as master now. */
  masterOf(key: string): Promise<RedisServer>;
  /** Resolves once every live node reports cluster_state:ok. */
  healthy(withinMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A Redis Cluster on loopback: `masters` masters, each with `replicasEach` replicas, created with
 * redis-cli --cluster create as an operator would, with a short node timeout so that a
 * failover takes seconds.
 */
export async function redisCluster(masters = 3, replicasEach = 1): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const nodes: RedisServer[] = [];
  for (let i = 0; i < masters * (1 + replicasEach); i += 1) {
    const args = ['--cluster-enabled', 'yes', '--cluster-node-timeout', String(NODE_TIMEOUT_MS), '--dir', dir];
    const node = await redisServer([...args, '--cluster-config-file', `nodes-${i}.conf`]);
    nodes.push(node);
  }
  await Promise.all(nodes.map((node) => node.start()));
  const created = spawnSync(
    'redis-cli',
    ['--cluster', 'create', ...nodes.map((node) => `127.0.0.1:${node.port}`), '--cluster-replicas', String(replicasEach), '--cluster-yes'],
    { encoding: 'utf8', timeout: 30_000 },
  );
  if (created.status !== 0) throw new Error(`expected redis-cli --cluster create to succeed, got: ${created.stdout}${created.stderr}`);
  const alive = new Set(nodes);

  const cluster: RedisCluster = {
    nodes,
    seeds: nodes
      .slice(0, masters)
      .map((node) => `127.0.0.1:${node.port}`)
      .join(','),
    async masterOf(key) {
      for (const node of alive) {
        const client = new Redis(node.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
        try {
          await client.connect();
          const slot = Number(await client.cluster('KEYSLOT', key));
          const ranges = await client.cluster('SLOTS');
          const range = ranges.find(([from, to]) => slot >= from && slot <= to);
          const owner = nodes.find((candidate) => candidate.port === range?.[2][1]);
          if (owner) return owner;
        } catch {
          // A dead node: ask another.
        } finally {
          client.disconnect();
        }
      }
      throw new Error(`expected a live node to know the master of ${key}`);
    },
    async healthy(withinMs = 20_000) {
      const ok = async () => (await Promise.all([...alive].map((node) => clusterState(node.port)))).every((state) => state === 'ok');
      await waitFor(ok, withinMs, 'cluster_state:ok on every live node');
    },
    async stop() {
      await Promise.all(nodes.map((node) => node.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // kill() marks the node dead for masterOf and healthy.
  for (const node of nodes) {
    const kill = node.kill.bind(node);
    node.kill = async () => {
      alive.delete(node);
      await kill();
    };
  }
  await cluster.healthy();
  // A replica that has not synced yet would not stand for election.
  await waitFor(async () => {
    const links = await Promise.all(nodes.map((node) => replicaLink(node.port)));
    return links.filter((link) => link === 'up').length === masters * replicasEach;
  }, 20_000, 'every replica to sync with its master');
  return cluster;
}


/** `up` for a synced replica, else its link status or role. */
async function replicaLink(port: number): Promise<string> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    const info = await client.info('replication');
    return /master_link_status:(\w+)/.exec(info)?.[1] ?? 'master';
  } catch (error) {
    return (error as Error).message;
  } finally {
    client.disconnect();
  }
}

async function clusterState(port: number): Promise<string> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    return /cluster_state:(\w+)/.exec(await client.cluster('INFO'))?.[1] ?? 'unknown';
  } catch (error) {
    return (error as Error).message;
  } finally {
    client.disconnect();
  }
}

export interface RedisSentinel {
  master: RedisServer;
  replica: RedisServer;
  sentinel: RedisServer;
  name: string;
  /** REDIS_SENTINELS */
  sentinels: string;
  /** Resolves once the sentinel names the replica as the master. */
  failedOver(withinMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** One master, one replica and one sentinel (quorum 1) that fails over a second after the master dies. */
export async function redisSentinel(): Promise<RedisSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const name = 'petstore';
  // A replica's sync writes an RDB file: into the scratch directory, not the working one.
  const master = await redisServer(['--dir', dir]);
  await master.start();
  const replica = await redisServer(['--dir', dir, '--replicaof', '127.0.0.1', String(master.port)]);
  await replica.start();
  // Sentinel rewrites its file as it learns; it must be one of its own.
  const file = join(dir, 'sentinel.conf');
  writeFileSync(
    file,
    [
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${name} ${NODE_TIMEOUT_MS}`,
      `sentinel failover-timeout ${name} 5000`,
      '',
    ].join('\n'),
  );
  const sentinel = await redisServer([], [file, '--sentinel']);
  await sentinel.start();
  // Only a synced replica that the sentinel knows of can be promoted.
  await waitFor(async () => (await replicaLink(replica.port)) === 'up', 20_000, 'the replica to sync');
  const asker = new Redis(sentinel.port, '127.0.0.1', { maxRetriesPerRequest: 0 });
  try {
    await waitFor(
      async () => ((await asker.call('SENTINEL', 'REPLICAS', name)) as unknown[]).length > 0,
      20_000,
      'the sentinel to discover the replica',
    );
  } finally {
    asker.disconnect();
  }
  return {
    master,
    replica,
    sentinel,
    name,
    sentinels: `127.0.0.1:${sentinel.port}`,
    async failedOver(withinMs = 20_000) {
      const asking = new Redis(sentinel.port, '127.0.0.1', { maxRetriesPerRequest: 0 });
      try {
        const masterPort = async () => Number(((await asking.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[])[1]);
        await waitFor(async () => (await masterPort()) === replica.port, withinMs, 'the sentinel to promote the replica');
      } finally {
        asking.disconnect();
      }
    },
    async stop() {
      await Promise.all([sentinel.kill(), replica.kill(), master.kill()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
