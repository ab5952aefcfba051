import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

export interface RedisServer {
  port: number;
  url: string;
  /** Starts redis-server (again) on the same port, resolving once it accepts connections. */
  start(): Promise<void>;
  /** Kills the process outright, as a crash would. */
  kill(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open and nothing answers. */
  pause(): void;
  /** Thaws it (SIGCONT). */
  resume(): void;
}

/**
 * A throwaway redis-server on a free loopback port: no persistence, nothing shared. `args` adds
 * options (a cluster node's, a replica's), `binaryArgs` goes first (`--sentinel` with its file).
 */
export async function redisServer(args: string[] = [], binaryArgs: string[] = []): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;

  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const started = spawn(
        'redis-server',
        [...binaryArgs, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--logfile', '', ...args],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child = started;
      await new Promise<void>((resolve, reject) => {
        let output = '';
        const timer = setTimeout(() => reject(new Error(`expected redis-server to start, got: ${output}`)), 10_000);
        started.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          // A sentinel never says it is ready: it is once it monitors its master.
          if (/Ready to accept connections|\+monitor master/.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        });
        started.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`expected redis-server to keep running, got exit ${code}: ${output}`));
        });
      });
      // Keep draining its output, or a full pipe would stall the server.
      started.removeAllListeners('exit');
      started.stdout.removeAllListeners('data');
      started.stdout.resume();
      started.stderr.resume();
    },
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill('SIGKILL');
      });
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
  };
  return server;
}

/** A loopback port free at the time of asking. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error(`expected a TCP address, got ${address}`);
  return address.port;
}

/**
 * Whether a redis-server binary is installed. Tests that start their own Redis run wherever one
 * is (CI's machines included); a machine without Redis at all cannot run them.
 */
export function redisServerInstalled(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}
