import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migratedDataDir } from '../helpers/database';
import { completion, GatewayProgram, type GatewayProcess, listeningUrl } from '../helpers/gateway-process';

/**
 * The gateway as a process (src/main.ts), on the embedded database, its stdout a pipe. Each starts
 * on its own copy of a migrated data directory, as `npm start` does on its second run, rather than
 * creating and migrating a database first.
 */
let program: GatewayProgram;
let dataDirs: string;
let template: string | undefined;
beforeAll(async () => {
  program = GatewayProgram.transpile();
  dataDirs = mkdtempSync(join(tmpdir(), 'gateway-data-'));
  template = await migratedDataDir(join(dataDirs, 'template'));
});
afterAll(() => {
  program.remove();
  rmSync(dataDirs, { recursive: true, force: true });
});

let started = 0;
function startGateway(): GatewayProcess {
  let dataDir = 'memory://';
  if (template) {
    dataDir = join(dataDirs, `gateway-${(started += 1)}`);
    cpSync(template, dataDir, { recursive: true });
  }
  return program.start({ PORT: '0', LOG_LEVEL: 'info', PGLITE_DATA_DIR: dataDir });
}

/**
 * Resolves once the gateway has answered a request: by then start-up has run to its end,
 * signal handlers included (they are installed just after the address is printed).
 */
async function listening(child: GatewayProcess): Promise<void> {
  const url = await listeningUrl(child);
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
}

/** Resolves with the exit code (or the signal). A gateway that never exits fails the test by Jest's timeout. */
function exited(child: GatewayProcess): Promise<number | string> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? String(signal))));
}

it('exits 0 on SIGTERM after its stdout pipe was closed', async () => {
  const child = startGateway();
  try {
    await listening(child);
    child.stdout.destroy(); // nothing reads the log any more: each write now fails with EPIPE
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
  } finally {
    child.kill('SIGKILL');
  }
});

it('still writes its last log lines on an orderly SIGTERM', async () => {
  const child = startGateway();
  try {
    await listening(child);
    let log = '';
    child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
    const messages = log
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line).msg);
    expect(messages).toEqual(expect.arrayContaining(['shutting down: finishing in-flight requests', 'stopped']));
  } finally {
    child.kill('SIGKILL');
  }
});

describe('a configuration it cannot serve stops start-up with one line, exit code 1', () => {
  const deep = 'query TooDeep { pets { nodes { category { pets { nodes { category { pets { nodes { category { pets { nodes { id } } } } } } } } } } } }';

  it.each([
    ['a variable out of range', () => ({ GRAPHQL_INTROSPECTION: 'sometimes' }), /^Configuration error: GRAPHQL_INTROSPECTION: expected /],
    [
      'a trusted document over a limit',
      () => {
        const file = join(dataDirs, 'manifest.json');
        writeFileSync(file, JSON.stringify({ [`sha256:${createHash('sha256').update(deep).digest('hex')}`]: deep }));
        return { TRUSTED_DOCUMENTS: file };
      },
      /^Configuration error: TRUSTED_DOCUMENTS \(.*manifest\.json\): document sha256:[0-9a-f]{64} \(query TooDeep\) is over a limit: Query depth/,
    ],
  ])('%s', async (_, env, line) => {
    const { code, stderr } = await completion(program.start({ PORT: '0', PGLITE_DATA_DIR: 'memory://', LOG_LEVEL: 'silent', ...env() }));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(line)]);
  });
});
