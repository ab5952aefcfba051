import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { transpileSources } from '../../scripts/transpile';

const ROOT = join(__dirname, '..', '..');
/**
 * PGlite's WebAssembly run by V8's baseline compiler alone: a process that lives for a test or two
 * spends more CPU optimising PostgreSQL's hot functions in the background (a second of it at
 * start) than the optimised code would save it.
 */
const V8_FLAGS = ['--liftoff-only'];

export type GatewayProcess = ChildProcessByStdio<null, Readable, Readable>;

/**
 * The gateway as a process (src/main.ts, as `npm start` runs it), transpiled as `npm run build`
 * transpiles it.
 */
export class GatewayProgram {
  private constructor(private readonly outDir: string) {}

  static transpile(): GatewayProgram {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-'));
    transpileSources(dir);
    // The packages, found as from the project itself, by require() and import() alike.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    return new GatewayProgram(dir);
  }

  /**
   * Starts main.js with `env` over a clean environment: no DATABASE_URL or REDIS_URL unless given.
   * Its database connection may take up to 30 s to open unless `env` says otherwise: on a busy
   * machine a process that has just loaded its embedded database can take longer than the 2 s
   * default to answer its own first connection, which no test here is about.
   */
  start(env: NodeJS.ProcessEnv): GatewayProcess {
    return this.run('src/main.ts', env);
  }

  /** Starts another of the project's programs (`src/cli/seed.ts`, say) the same way. */
  run(source: string, env: NodeJS.ProcessEnv): GatewayProcess {
    const base: NodeJS.ProcessEnv = { ...process.env, DATABASE_CONNECT_TIMEOUT_MS: '30000' };
    delete base.DATABASE_URL;
    delete base.REDIS_URL;
    return spawn(process.execPath, [...V8_FLAGS, this.transpiled(source)], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** Where the transpiled `source` (a path in the project, such as `src/main.ts`) is. */
  transpiled(source: string): string {
    return join(this.outDir, source.replace(/\.ts$/, '.js'));
  }

  remove(): void {
    rmSync(this.outDir, { recursive: true, force: true });
  }
}

/** Everything the process writes on stdout and stderr, and its exit code, once it exits. */
export function completion(child: GatewayProcess): Promise<{ code: number | string; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code: code ?? String(signal), stdout, stderr })));
}

/** The URL the gateway prints once it listens (without `/graphql`); rejects if it exits first. */
export function listeningUrl(child: GatewayProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
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
}
