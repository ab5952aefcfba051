import { spawn } from 'node:child_process';
import { fencedBlocks } from '../helpers/docs';
import { postgresBinDir, type PostgresCluster, startPostgresCluster } from '../helpers/postgres-cluster';

/**
 * docs/operating.md's "Running with PostgreSQL", pasted into a shell as written: create the
 * database, migrate, seed, issue an admin key, start. The only change is the server's address,
 * a PostgreSQL cluster of the test's own; the gateway then serves the demo catalogue to that key.
 */
const binDir = postgresBinDir();
const block = fencedBlocks('sh', ['docs/operating.md']).find(({ text }) => text.includes('createdb'))?.text;

let cluster: PostgresCluster;
beforeAll(async () => {
  if (!binDir) throw new Error("PostgreSQL's server binaries are needed: apt-get install postgresql, or set PG_BIN");
  cluster = await startPostgresCluster(binDir);
});
afterAll(() => cluster?.remove());

it('creates, migrates and seeds the database, issues a key and starts a gateway that serves it', async () => {
  expect(block).toBeDefined();
  const port = new URL(cluster.url).port;
  // createdb reads the port from PGPORT; the URL names it.
  const script = (block as string).replace('127.0.0.1:5432', `127.0.0.1:${port}`);
  const shell = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    env: { ...process.env, PGPORT: port, PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '', ADMIN_API_KEY: '' },
    // Its own process group: the gateway npm starts is stopped with the shell.
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => shell.on('exit', resolve));
  let printed = '';
  shell.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const started = new Promise<string | undefined>((resolve) => {
    shell.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const url = /^Pet Store gateway: (\S+)$/m.exec(printed)?.[1];
      if (url) resolve(url);
    });
    void exited.then(() => resolve(undefined));
  });
  try {
    const url = await started;
    expect({ url, printed }).toEqual({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/graphql$/), printed: expect.any(String) });
    expect(printed).toContain('Loaded the demo catalogue.');
    const key = /It is shown only this once:\n(psk_\w+)$/m.exec(printed)?.[1];
    expect(key).toBeDefined();
    const response = await fetch(url as string, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key as string },
      body: JSON.stringify({ query: '{ rateLimit { plan limit } apiKeys { nodes { name role } } pet(id: "1") { name } }' }),
    });
    expect(await response.json()).toEqual({
      data: { rateLimit: { plan: 'ENTERPRISE', limit: 5000 }, apiKeys: { nodes: [{ name: 'ops', role: 'ADMIN' }] }, pet: { name: 'Rex' } },
      extensions: expect.anything(),
    });
  } finally {
    process.kill(-(shell.pid as number), 'SIGTERM');
    await exited;
  }
});
