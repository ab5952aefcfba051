import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisTopology } from '../config';
import type { Logger } from '../logger';

/** A client of one Redis, of a master found through Sentinel, or of a Redis Cluster. */
export type RedisConnection = Redis | Cluster;

/**
 * Options for the limiter's Redis client. An outage must cost a request a fraction of a second
 * at most: commands fail at once while disconnected (no offline queue, no retries) and after
 * 250 ms when Redis hangs, and the client keeps reconnecting in the background, forever.
 */
export const LIMITER_REDIS_OPTIONS: RedisOptions = {
  // No Pipeline per tick: a request sends one command, and auto-pipelining's Pipeline and flush
  // cost more CPU than the writes it saves (docs/lab/patches-taken-out.md): each command is
  // written as it is sent.
  enableAutoPipelining: false,
  connectTimeout: 250,
  commandTimeout: 250,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  retryStrategy: (attempt) => Math.min(attempt * 250, 1_000),
};

const reconnectEvery = (attempt: number) => Math.min(attempt * 250, 1_000);

/** A client for `topology`; `options` override the limiter's (for a client that must queue, say). */
export function createRedisClient(topology: RedisTopology, logger: Logger, options: RedisOptions = {}): RedisConnection {
  const redis = connect(topology, { ...LIMITER_REDIS_OPTIONS, ...options });
  // Without a listener ioredis prints every failed reconnection; the outage itself is logged
  // once, by the resilient store.
  redis.on('error', (error: Error) => logger.debug({ err: error.message }, 'Redis connection error'));
  return redis;
}

function connect(topology: RedisTopology, options: RedisOptions): RedisConnection {
  if (topology.kind === 'single') return new Redis(topology.url, options);
  const { tls, username, password } = topology;
  const secured = tls ? { tls: {} } : {};
  if (topology.kind === 'sentinel') {
    return new Redis({
      ...options,
      ...secured,
      sentinels: topology.sentinels,
      name: topology.name,
      username,
      password,
      sentinelUsername: username,
      sentinelPassword: password,
      enableTLSForSentinelMode: tls,
      sentinelRetryStrategy: reconnectEvery,
      // Asks the sentinels again as soon as they announce a new master, not only on error.
      failoverDetector: true,
    });
  }
  const { enableAutoPipelining, enableOfflineQueue, retryStrategy: _nodeRetry, ...nodeOptions } = options;
  return new Cluster(topology.nodes, {
    enableAutoPipelining,
    enableOfflineQueue,
    clusterRetryStrategy: reconnectEvery,
    // Retries while slots move stay short; the resilient store gives up after 250 ms anyway.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    slotsRefreshTimeout: 1_000,
    slotsRefreshInterval: 2_000,
    redisOptions: { ...nodeOptions, ...secured, username, password },
  });
}

/** Resolves when the client is ready, or after `withinMs` (the caller then starts degraded). */
export function readyWithin(redis: RedisConnection, withinMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, withinMs);
    redis.once('ready', done);
  });
}

/**
 * Whether Redis serves commands. A cluster serves them once the client has learnt which masters
 * hold the slots now (a promoted replica, after a failover), each of them answers, and the
 * cluster says it is whole: until its peers notice, a dead master is still listed as serving.
 */
export async function serving(redis: RedisConnection): Promise<boolean> {
  if (!(redis instanceof Cluster)) return (await redis.ping()) === 'PONG';
  await new Promise<void>((resolve, reject) => redis.refreshSlotsCache((error) => (error ? reject(error) : resolve())));
  const masters = redis.nodes('master');
  const answers = await Promise.all(masters.map((node) => node.cluster('INFO')));
  return masters.length > 0 && answers.every((info) => /cluster_state:ok/.test(info));
}

/** Where `topology` is, and the variable that says so, for a line an operator reads: never a password. */
export function redisAddress(topology: RedisTopology): string {
  const nodes = (list: { host: string; port: number }[]) => list.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(', ');
  switch (topology.kind) {
    case 'single': {
      const { hostname, port } = new URL(topology.url);
      return `${hostname || 'localhost'}:${port || '6379'} (REDIS_URL)`;
    }
    case 'cluster':
      return `${nodes(topology.nodes)} (REDIS_CLUSTER_NODES)`;
    case 'sentinel':
      return `master "${topology.name}" through ${nodes(topology.sentinels)} (REDIS_SENTINELS)`;
  }
}
