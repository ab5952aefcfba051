import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  it('refuses a second gateway, and `npm run seed`, on a directory a gateway holds; the next one starts once it stops', async () => {
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
    await stopped(await started(program.start({ ...QUIET, PGLITE_DATA_DIR: dir })));
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
