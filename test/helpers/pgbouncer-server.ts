import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { DATABASE_DEFAULTS } from '../../src/config';
import { freePort } from './redis-server';

/** Debian installs it in /usr/sbin, which an unprivileged user's PATH may lack. */
const BINARIES = ['pgbouncer', '/usr/sbin/pgbouncer'];

/** The PgBouncer binary, or undefined where none is installed. */
export function pgbouncerBinary(): string | undefined {
  return BINARIES.find((binary) => (binary.startsWith('/') ? existsSync(binary) : spawnSync(binary, ['--version'], { stdio: 'ignore' }).status === 0));
}

export interface PgBouncerOptions {
  /** Server connections per database: fewer than the clients, as behind a pooler in production. */
  serverPoolSize?: number;
  /**
   * The timeouts every server session starts with (connect_query), as an operator sets them for
   * the gateway behind a transaction-mode pooler; 0 leaves them off.
   */
  sessionTimeoutMs?: number;
}

export interface PgBouncer {
  /** The pooler's postgres:// URL of `database` on the server it fronts. */
  url(database: string): string;
  stop(): Promise<void>;
}

/**
 * A PgBouncer of its own in transaction mode on a free loopback port, in front of the server
 * `serverUrl` names, any database, no authentication of its own (auth_type any: every client
 * logs in as the URL's user). Its config lives in a temporary directory, removed on stop.
 */
export async function startPgBouncer(serverUrl: string, { serverPoolSize = 5, sessionTimeoutMs = DATABASE_DEFAULTS.statementTimeoutMs }: PgBouncerOptions = {}): Promise<PgBouncer> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error('expected a pgbouncer binary (apt-get install pgbouncer)');
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  // PgBouncer will not run as root; it switches to postgres, which must read the config.
  chmodSync(dir, 0o755);
  const target = [
    `host=${server.hostname}`,
    `port=${server.port || 5432}`,
    `user=${decodeURIComponent(server.username) || 'postgres'}`,
    server.password ? `password=${decodeURIComponent(server.password)}` : '',
    sessionTimeoutMs > 0
      ? `connect_query='SET statement_timeout = ${sessionTimeoutMs}; SET idle_in_transaction_session_timeout = ${sessionTimeoutMs}'`
      : '',
  ];
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(
    config,
    [
      '[databases]',
      `* = ${target.filter(Boolean).join(' ')}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      `default_pool_size = ${serverPoolSize}`,
      'max_client_conn = 1000',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const child = spawn(binary, [...(userInfo().uid === 0 ? ['-u', 'postgres'] : []), config], { stdio: ['ignore', 'pipe', 'pipe'] });
  await started(child);
  return {
    url(database: string) {
      const url = new URL(serverUrl);
      url.host = `127.0.0.1:${port}`;
      url.pathname = `/${database}`;
      return url.toString();
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once PgBouncer says it is up; it logs to stderr when it runs in the foreground. */
function started(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`expected pgbouncer to start, got: ${output}`)), 10_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/process up/.test(output)) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.stderr?.removeAllListeners('data');
        // Keep draining its log, or a full pipe would stall it.
        child.stderr?.resume();
        resolve();
      }
    });
    child.stdout?.resume();
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`expected pgbouncer to keep running, got exit ${code}: ${output}`));
    });
  });
}

