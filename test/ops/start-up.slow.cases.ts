import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { migratedDataDir } from '../helpers/database';
import { completion, GatewayProgram, type GatewayProcess, listeningUrl } from '../helpers/gateway-process';

/**
 * What the gateway, `npm run seed` and `npm run apikey` say when they cannot start, as processes:
 * one line naming the variable and what to do, exit code 1.
 */
let program: GatewayProgram;
let dataDirs: string;
let template: string | undefined;
beforeAll(async () => {
  program = GatewayProgram.transpile();
  dataDirs = mkdtempSync(join(tmpdir(), 'start-up-'));
  template = await migratedDataDir(join(dataDirs, 'template'));
});
afterAll(() => {
  program.remove();
  rmSync(dataDirs, { recursive: true, force: true });
});

let made = 0;
/** A data directory of its own, migrated when the run has a template (a second start's speed). */
function dataDir(): string {
  const dir = join(dataDirs, `data-${(made += 1)}`);
  if (template) cpSync(template, dir, { recursive: true });
  else mkdirSync(dir);
  return dir;
}

const QUIET = { PORT: '0', LOG_LEVEL: 'silent' };

async function stopped(child: GatewayProcess): Promise<void> {
  const done = completion(child);
  child.kill('SIGTERM');
  expect((await done).code).toBe(0);
}

describe('one process per embedded data directory', () => {
  it('refuses a second gateway, and `npm run seed`, on a directory a gateway holds, and frees it on stopping', async () => {
    const dir = dataDir();
    const first = program.start({ ...QUIET, PGLITE_DATA_DIR: dir });
    try {
      await listeningUrl(first);
      expect(readFileSync(join(dir, 'gateway.pid'), 'utf8').trim()).toBe(String(first.pid));
      const refusal = `PGLITE_DATA_DIR: ${dir} is in use by another process (pid ${first.pid}); stop it first, or set PGLITE_DATA_DIR to another directory (memory:// for a throwaway database).`;
      for (const [source, env] of [['src/main.ts', QUIET], ['src/cli/seed.ts', {}]] as const) {
        const { code, stdout, stderr } = await completion(program.run(source, { ...env, PGLITE_DATA_DIR: dir }));
        expect({ source, code, stdout, stderr: stderr.trim() }).toEqual({ source, code: 1, stdout: '', stderr: refusal });
      }
    } finally {
      await stopped(first);
    }
    expect(existsSync(join(dir, 'gateway.pid'))).toBe(false);
  });

  it('takes over the lock file of a process that is gone', async () => {
    const dir = dataDir();
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(join(dir, 'gateway.pid'), `${gone}\n`);
    const gateway = await started(program.start({ ...QUIET, PGLITE_DATA_DIR: dir }));
    try {
      expect(readFileSync(join(dir, 'gateway.pid'), 'utf8').trim()).toBe(String(gateway.pid));
    } finally {
      await stopped(gateway);
    }
  });
});

async function started(child: GatewayProcess): Promise<GatewayProcess> {
  await listeningUrl(child);
  return child;
}

/** A port nothing listens on: taken from the system, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('start-up lines', () => {
  it('name the database in use, a misspelled variable with the one probably meant, and an unreachable Redis by its address', async () => {
    const dir = dataDir();
    const redisPort = await closedPort();
    const gateway = program.start({ ...QUIET, PGLITE_DATA_DIR: dir, DATABSE_URL: 'postgres://postgres@127.0.0.1:5432/petstore', REDIS_URL: `redis://127.0.0.1:${redisPort}` });
    const output = completion(gateway);
    await listeningUrl(gateway);
    gateway.kill('SIGTERM');
    const { code, stdout, stderr } = await output;
    expect(code).toBe(0);
    expect(stdout).toContain(`\nDatabase: embedded PGlite at ${dir}\n`);
    expect(stderr.trim().split('\n')).toEqual([
      'Warning: DATABSE_URL is not a setting of the gateway and DATABASE_URL is unset: did you mean DATABASE_URL?',
      `Warning: Redis at 127.0.0.1:${redisPort} (REDIS_URL) cannot be reached: rate limits and bans are per instance until it answers; is it running, and is the address right?`,
    ]);
  });
});

describe('a gateway that cannot listen stops with one line naming the variable, exit code 1', () => {
  it('PORT taken by another process', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const { code, stderr } = await completion(program.start({ ...QUIET, PORT: String(port), PGLITE_DATA_DIR: 'memory://' }));
      expect({ code, stderr: stderr.trim() }).toEqual({
        code: 1,
        stderr: `Configuration error: PORT: expected a port no other process listens on at 127.0.0.1 (stop that process, or set PORT to another; 0 picks a free one), got "${port}"`,
      });
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('HOST a name that does not resolve', async () => {
    // .invalid never resolves (RFC 6761).
    const { code, stderr } = await completion(program.start({ ...QUIET, HOST: 'gateway.invalid', PGLITE_DATA_DIR: 'memory://' }));
    expect({ code, stderr: stderr.trim() }).toEqual({
      code: 1,
      stderr: 'Configuration error: HOST: expected a host name that resolves, or an IP address of this machine (0.0.0.0 for all of them), got "gateway.invalid"',
    });
  });
});
