import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis-server';

/** Where Debian installs each major version's server binaries. */
const DEBIAN_BINARIES = '/usr/lib/postgresql';

/**
 * The directory of `initdb` and `pg_ctl`: PG_BIN when set, else the newest under
 * /usr/lib/postgresql, else undefined (a machine without the server cannot run these tests).
 */
export function postgresBinDir(): string | undefined {
  const given = process.env.PG_BIN;
  if (given) return existsSync(join(given, 'pg_ctl')) ? given : undefined;
  if (!existsSync(DEBIAN_BINARIES)) return undefined;
  const versions = readdirSync(DEBIAN_BINARIES)
    .filter((version) => existsSync(join(DEBIAN_BINARIES, version, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(DEBIAN_BINARIES, versions[0], 'bin') : undefined;
}

export type ShutdownMode = 'smart' | 'fast' | 'immediate';

export interface PostgresCluster {
  /** postgres:// URL of the cluster's `postgres` database, user `postgres`, no password. */
  url: string;
  /** `pg_ctl restart -m mode`, resolving once the server accepts connections again. */
  restart(mode: ShutdownMode): Promise<void>;
  stop(mode: ShutdownMode): Promise<void>;
  /** Starts the stopped server, resolving once it accepts connections. */
  start(): Promise<void>;
  /** `pg_ctl promote`: a standby ends its recovery and takes writes, on a timeline of its own. */
  promote(): Promise<void>;
  /** Stops the server at once and removes its files. */
  remove(): Promise<void>;
}

/**
 * A PostgreSQL cluster of its own, made with `initdb` in a temporary folder and served by `pg_ctl`
 * on a free loopback port (no Unix socket, no fsync: a test's data need not survive a crash of the
 * machine). The server refuses to run as root, so as root (CI) every tool runs as `postgres`,
 * which owns the folder. pg_ctl's own `-w` waits for the server to accept connections. `settings`
 * are server settings (`name=value`) added to the command line.
 */
export async function startPostgresCluster(binDir: string, settings: string[] = []): Promise<PostgresCluster> {
  const { run, data, serve } = await clusterFolder(binDir, settings);
  await run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions']);
  return serve();
}

/**
 * A streaming replica of `primary` (a cluster of startPostgresCluster, which allows replication
 * from loopback by default): `pg_basebackup -R` copies it and writes the standby's connection,
 * then it is served as a cluster of its own, read-only, replaying the primary's log as it comes.
 * `settings` as startPostgresCluster's: `recovery_min_apply_delay=500ms` keeps it that far behind.
 */
export async function startStandby(binDir: string, primary: Pick<PostgresCluster, 'url'>, settings: string[] = []): Promise<PostgresCluster> {
  const { run, data, serve } = await clusterFolder(binDir, ['hot_standby_feedback=on', ...settings]);
  const { port } = new URL(primary.url);
  await run('pg_basebackup', ['-h', '127.0.0.1', '-p', port, '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--no-sync']);
  return serve();
}

/** A temporary folder (owned by `postgres` when running as root), a free port, and how to run the server's tools there. */
async function clusterFolder(binDir: string, settings: string[]) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pg-cluster-'));
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  // Asynchronous: the test's own clients keep sending while pg_ctl waits.
  const run = async (tool: string, args: string[]) => {
    const command = join(binDir, tool);
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    await promisify(execFile)(file, argv, { timeout: 120_000 });
  };
  const options = [`-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off -c max_connections=60`, ...settings.map((setting) => `-c ${setting}`)].join(' ');
  const pgCtl = (...args: string[]) => run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', ...args]);
  const serve = async (): Promise<PostgresCluster> => {
    await pgCtl('-o', options, 'start');
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      restart: (mode) => pgCtl('-o', options, '-m', mode, 'restart'),
      stop: (mode) => pgCtl('-m', mode, 'stop'),
      start: () => pgCtl('-o', options, 'start'),
      promote: () => pgCtl('promote'),
      async remove() {
        try {
          await pgCtl('-m', 'immediate', 'stop');
        } catch {
          // Already stopped.
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
  return { run, data, serve };
}
