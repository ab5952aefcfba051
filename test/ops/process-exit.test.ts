import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import ts from 'typescript';

/**
 * The gateway as a process (src/main.ts), on the embedded database, its stdout a pipe. The
 * sources are transpiled file by file, as ts-jest does, which takes a second where a full build
 * would take many.
 */
const ROOT = join(__dirname, '..', '..');
let outDir: string;

function transpileSources(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-'));
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT);
  const compilerOptions = { ...options, module: ts.ModuleKind.CommonJS, sourceMap: false };
  const walk = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : [],
    );
  for (const file of walk(join(ROOT, 'src'))) {
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file });
    const target = join(dir, relative(ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
  }
  return dir;
}

beforeAll(() => {
  outDir = transpileSources();
});
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

function startGateway(): ChildProcessByStdio<null, Readable, Readable> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'info', PGLITE_DATA_DIR: 'memory://', NODE_PATH: join(ROOT, 'node_modules') };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  return spawn(process.execPath, [join(outDir, 'src', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Resolves once the gateway has answered a request: by then start-up has run to its end,
 * signal handlers included (they are installed just after the address is printed).
 */
async function listening(child: ChildProcessByStdio<null, Readable, Readable>): Promise<void> {
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const printed = /Pet Store gateway: (http:\/\/\S+)\/graphql/.exec(seen);
      if (printed) {
        child.stdout.off('data', onData);
        resolve(printed[1]);
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`expected the gateway to start, it exited with ${code}: ${seen}`)));
  });
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
}

/** Resolves with the exit code (or the signal). A gateway that never exits fails the test by Jest's timeout. */
function exited(child: ChildProcessByStdio<null, Readable, Readable>): Promise<number | string> {
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
