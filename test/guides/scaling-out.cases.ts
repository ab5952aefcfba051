import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { fencedBlocks } from '../helpers/docs';
import { postgresBinDir, type PostgresCluster, startPostgresCluster } from '../helpers/postgres-cluster';
import { freePort, redisServer, type RedisServer } from '../helpers/redis-server';

/**
 * docs/scaling-out.md's "Several instances", pasted into a shell as written: an admin key made
 * once, the database created and seeded, two instances on one host. The only changes are the
 * servers' addresses (a PostgreSQL cluster and a redis-server of the test's own) and the two
 * ports (free ones); one line is added to print the admin key the block made.
 */
const binDir = postgresBinDir();
const block = fencedBlocks('sh', ['docs/scaling-out.md']).find(({ text }) => text.includes('REDIS_KEY_PREFIX'))?.text;

let cluster: PostgresCluster;
let redis: RedisServer;
beforeAll(async () => {
  if (!binDir) throw new Error("PostgreSQL's server binaries are needed: apt-get install postgresql, or set PG_BIN");
  cluster = await startPostgresCluster(binDir);
  redis = await redisServer();
  await redis.start();
});
afterAll(async () => {
  await redis?.kill();
  await cluster?.remove();
});

it('makes a key, creates and seeds the database, and starts two instances that share it and Redis', async () => {
  expect(block).toBeDefined();
  const ports = [await freePort(), await freePort()];
  const script = `${(block as string)
    .replace('db.internal:5432', `127.0.0.1:${new URL(cluster.url).port}`)
    .replace('-h db.internal', '-h 127.0.0.1')
    .replace('cache.internal:6379', `127.0.0.1:${redis.port}`)
    .replace('PORT=4000', `PORT=${ports[0]}`)
    .replace('PORT=4001', `PORT=${ports[1]}`)}\necho "admin key: $ADMIN_API_KEY"\nwait\n`;
  const shell = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    env: { ...process.env, PGPORT: new URL(cluster.url).port, LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '', ADMIN_API_KEY: '' },
    // Its own process group: the gateways npm starts are stopped with the shell.
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => shell.on('exit', resolve));
  let printed = '';
  shell.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const started = new Promise<string[]>((resolve) => {
    shell.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const urls = [...printed.matchAll(/^Pet Store gateway: (\S+)$/gm)].map((match) => match[1]);
      if (urls.length === 2) resolve(urls.sort());
    });
    void exited.then(() => resolve([]));
  });
  const client = new Redis(redis.url);
  try {
    const urls = await started;
    expect({ urls, printed }).toEqual({ urls: ports.sort().map((port) => `http://localhost:${port}/graphql`), printed: expect.any(String) });
    const key = /^admin key: (psk_\w+)$/m.exec(printed)?.[1];
    for (const url of urls) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': key as string },
        body: JSON.stringify({ query: '{ apiKeys { totalCount } pet(id: "1") { name } }' }),
      });
      const { data, errors } = (await response.json()) as { data?: { pet: unknown }; errors?: unknown };
      expect({ pet: data?.pet, errors }).toEqual({ pet: { name: 'Rex' }, errors: undefined });
    }
    expect(await client.zcard('petstore:instances')).toBe(2);
  } finally {
    client.disconnect();
    process.kill(-(shell.pid as number), 'SIGTERM');
    await exited;
  }
});
