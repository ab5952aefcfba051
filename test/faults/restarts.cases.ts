import { connectDatabase } from '../../src/db/database';
import { generateApiKey, hashApiKey } from '../../src/auth/key-secret';
import { KEY_CACHE_TTL_MS } from '../../src/auth/api-key.service';
import { adminQuery } from '../helpers/database';
import { completion, GatewayProgram, type GatewayProcess, listeningUrl } from '../helpers/gateway-process';
import { postgresBinDir, type PostgresCluster, startPostgresCluster } from '../helpers/postgres-cluster';
import { redisServer, redisServerInstalled, type RedisServer } from '../helpers/redis-server';
import { type Answer, byStatus, SteadyLoad } from '../helpers/steady-load';
import { describeWhen } from '../helpers/services';
import { waitFor } from '../helpers/wait';

/**
 * Two gateway processes on a PostgreSQL cluster and a Redis of the test's own, under a steady load
 * of GraphQL and REST requests from a few keys, while the test restarts the servers: no process
 * exits, no request is answered 500, 503 is the only refusal while a server is away, and every
 * instance answers 200 again within RECOVERY_MS of the server's return.
 */
const binDir = postgresBinDir();
const withServers = describeWhen(
  (!binDir && "PostgreSQL's server binaries (apt-get install postgresql, or PG_BIN)") || (!redisServerInstalled() && 'redis-server (apt-get install redis-server)'),
);

const RECOVERY_MS = 5_000;
/** A ceiling for a broken run, never a measurement. */
const WITHIN_MS = 60_000;

interface Instance {
  url: string;
  child: GatewayProcess;
  exits: (number | string)[];
  output: Promise<{ stderr: string }>;
}

withServers('restarts of the servers under load', () => {
  let cluster: PostgresCluster;
  let redis: RedisServer;
  let program: GatewayProgram;
  let instances: Instance[];
  let load: SteadyLoad;
  const adminKey = generateApiKey();
  /** Valid keys the load sends, and one no instance has seen until the database is down. */
  const loadKeys = [adminKey, generateApiKey(), generateApiKey()];
  const unseenKey = generateApiKey();

  beforeAll(async () => {
    cluster = await startPostgresCluster(binDir!);
    // The gateway's migrations, run as an instance runs them at start-up; then the keys.
    const dataSource = await connectDatabase(cluster.url, { embedded: false });
    for (const key of [...loadKeys.slice(1), unseenKey]) {
      await dataSource.query(
        "INSERT INTO api_keys (name, key_hash, plan, role, requests_per_minute, requests_per_day) VALUES ('load', $1, 'enterprise', 'client', 100000, 10000000)",
        [hashApiKey(key)],
      );
    }
    await dataSource.destroy();
    redis = await redisServer();
    await redis.start();
    program = GatewayProgram.transpile();
    instances = await Promise.all([0, 1].map(() => startInstance(program, cluster.url, redis.url, adminKey)));
    load = new SteadyLoad(
      instances.map(({ url }) => url),
      loadKeys,
    );
    await waitFor(() => instances.every((_, instance) => load.since(0, instance).some(({ status }) => status === 200)), WITHIN_MS, 'the load to be served');
  }, 180_000);

  afterAll(async () => {
    await load?.stop();
    for (const { child } of instances ?? []) child.kill('SIGKILL');
    program?.remove();
    await redis?.kill();
    await cluster?.remove();
  });

  afterEach(async () => {
    for (const { exits, output } of instances) {
      if (exits.length > 0) console.log(`gateway exited (${exits.join(', ')}):\n${(await output).stderr.slice(-4_000)}`);
    }
  });

  /** Runs `outage` under the load, then waits for a 200 on every instance; the figures per instance. */
  async function underLoad(label: string, outage: () => Promise<void>) {
    const from = Date.now();
    await outage();
    const back = Date.now();
    await waitFor(() => instances.every((_, instance) => firstOk(load.since(back, instance)) !== undefined), WITHIN_MS, `a 200 from every instance after ${label}`);
    const figures = instances.map(({ exits }, instance) => {
      const recovered = firstOk(load.since(back, instance))!;
      const during = load.since(from, instance).filter(({ at }) => at <= recovered.at);
      return { instance, exits: exits.length, during: byStatus(during), recoveryMs: recovered.at - back };
    });
    console.log(
      `${label}: ${figures
        .map(({ instance, exits, during, recoveryMs }) => `instance ${instance}: ${exits} exits, answers from the outage to recovery ${JSON.stringify(during)}, first 200 ${recoveryMs} ms after the server returned`)
        .join('; ')}`,
    );
    return figures;
  }

  const firstOk = (answers: Answer[]) => answers.find(({ status }) => status === 200);

  /** Every answer of the run so far was 200 or 503: no 500, no 429 or 403 for a valid key, none missing. */
  const expectOnly200And503 = () => expect(byStatus(load.answers.filter(({ status }) => status !== 200 && status !== 503))).toEqual({});

  /** Sessions LISTENing for changes (src/live/change-listener.ts), as the server counts them. */
  const listening = async () => {
    const [{ sessions }] = await adminQuery<{ sessions: number }>(cluster.url, "SELECT count(*)::int AS sessions FROM pg_stat_activity WHERE query LIKE 'LISTEN %'");
    return sessions;
  };

  it.each(['fast', 'immediate'] as const)('survives pg_ctl restart -m %s, and listens for changes again', async (mode) => {
    let back = 0;
    const figures = await underLoad(`PostgreSQL restart -m ${mode}`, async () => {
      await cluster.restart(mode);
      back = Date.now();
    });
    await waitFor(async () => (await listening()) === instances.length, WITHIN_MS, 'every instance to LISTEN again');
    const relistenedMs = Date.now() - back;
    console.log(`PostgreSQL restart -m ${mode}: every instance LISTENs again ${relistenedMs} ms after the server returned`);
    for (const { exits, recoveryMs } of figures) {
      expect(exits).toBe(0);
      expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_MS);
    }
    expect(relistenedMs).toBeLessThanOrEqual(RECOVERY_MS);
    expectOnly200And503();
  });

  it('answers 503 with Retry-After to a key it cannot check, never counting, limiting or banning it, and serves keys it has verified', async () => {
    const [first] = instances;
    const figures = await underLoad('PostgreSQL stopped (-m fast) and started', async () => {
      await cluster.stop('fast');
      const stoppedAt = Date.now();
      // More requests than a FREE quota allows in a minute: none may be refused 429 or banned.
      const unseen: { status: number; retryAfter: string | null; code: unknown }[] = [];
      for (let i = 0; i < 70; i += 1) {
        const response = await fetch(`${first.url}/graphql`, {
          method: 'POST',
          headers: { 'X-API-Key': unseenKey, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: '{ rateLimit { limit remaining } }' }),
        });
        const body = (await response.json()) as { code?: unknown; errors?: { extensions?: { code?: unknown } }[] };
        unseen.push({ status: response.status, retryAfter: response.headers.get('retry-after'), code: body.code ?? body.errors?.[0]?.extensions?.code });
      }
      expect(unseen.filter(({ status, retryAfter, code }) => status !== 503 || !retryAfter || code !== 'SERVICE_UNAVAILABLE')).toEqual([]);
      // A key the instance verified before the outage, once its cache entry is past its time:
      // served from the last answer the database gave, for what needs no database.
      await waitFor(() => Date.now() - stoppedAt > KEY_CACHE_TTL_MS, WITHIN_MS, 'the key cache entries to go stale');
      const known = await fetch(`${first.url}/graphql`, {
        method: 'POST',
        headers: { 'X-API-Key': loadKeys[1], 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: '{ rateLimit { limit } }' }),
      });
      expect(known.status).toBe(200);
      await cluster.start();
    });
    for (const { exits } of figures) expect(exits).toBe(0);
    expectOnly200And503();
    // Once the database is back the key is served: nothing was held against it.
    const after = await fetch(`${first.url}/graphql`, {
      method: 'POST',
      headers: { 'X-API-Key': unseenKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: '{ pets(first: 1) { totalCount } }' }),
    });
    expect(after.status).toBe(200);
  });

  it('survives a restart of Redis, and its limits return to Redis', async () => {
    const limiterOf = async ({ url }: Instance) => ((await (await fetch(`${url}/readyz`)).json()) as { redis: string }).redis;
    let back = 0;
    const figures = await underLoad('Redis restart', async () => {
      await redis.kill();
      // Both instances have noticed, and limit on their own meanwhile.
      await waitFor(async () => (await Promise.all(instances.map(limiterOf))).every((state) => state === 'degraded'), WITHIN_MS, 'the instances to notice');
      await redis.start();
      back = Date.now();
    });
    const backOnRedis = await Promise.all(
      instances.map(async (instance) => {
        await waitFor(async () => (await limiterOf(instance)) === 'ok', WITHIN_MS, 'the limiter to be back on Redis');
        return Date.now() - back;
      }),
    );
    console.log(`Redis restart: limits back on Redis ${backOnRedis.map((ms, instance) => `on instance ${instance} after ${ms} ms`).join(', ')}`);
    for (const { exits, recoveryMs } of figures) {
      expect(exits).toBe(0);
      expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_MS);
    }
    for (const ms of backOnRedis) expect(ms).toBeLessThanOrEqual(RECOVERY_MS);
    expectOnly200And503();
  });
});

/** A gateway process on the given servers, once it says where it listens. */
async function startInstance(program: GatewayProgram, databaseUrl: string, redisUrl: string, adminKey: string): Promise<Instance> {
  const child = program.start({
    PORT: '0',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: 'restarts',
    ADMIN_API_KEY: adminKey,
  });
  const exits: (number | string)[] = [];
  child.once('exit', (code, signal) => exits.push(code ?? String(signal)));
  const output = completion(child);
  return { url: await listeningUrl(child), child, exits, output };
}
