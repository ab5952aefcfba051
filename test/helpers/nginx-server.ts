import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server';
import { waitFor } from './wait';

/** Debian installs it in /usr/sbin, which an unprivileged user's PATH may lack. */
export const NGINX_BINARY = '/usr/sbin/nginx';

/**
 * The shipped configuration, run as it is but for the addresses below: two folders up from
 * test/helpers, three from dist/test/helpers, where the bench runs it compiled.
 */
const SHIPPED = [join(__dirname, '..', '..'), join(__dirname, '..', '..', '..')]
  .map((root) => join(root, 'deploy', 'nginx', 'petstore.conf'))
  .find((file) => existsSync(file))!;
/** What the shipped file listens on and forwards to, as it must read for the test to replace it. */
const LISTEN = 'listen 80;';
const UPSTREAMS = ['server 127.0.0.1:4001;', 'server 127.0.0.1:4002;'];

export interface Nginx {
  url: string;
  /** The master process: its workers are its children. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * nginx in the foreground, as the current user, with a temporary prefix directory holding what
 * Debian's /etc/nginx/nginx.conf would: the events block, and an http block that includes the
 * shipped deploy/nginx/petstore.conf, its port and instances' addresses replaced by
 * `instancePorts`' (one or more instances on 127.0.0.1).
 */
export async function startNginx(instancePorts: number[]): Promise<Nginx> {
  if (!existsSync(NGINX_BINARY)) throw new Error(`expected nginx at ${NGINX_BINARY} (apt-get install nginx)`);
  const port = await freePort();
  const prefix = mkdtempSync(join(tmpdir(), 'nginx-'));
  mkdirSync(join(prefix, 'temp'));
  let site = replaceOnce(readFileSync(SHIPPED, 'utf8'), LISTEN, `listen 127.0.0.1:${port};`);
  site = replaceOnce(site, UPSTREAMS[0], instancePorts.map((instance) => `server 127.0.0.1:${instance};`).join('\n    '));
  site = replaceOnce(site, UPSTREAMS[1], '');
  writeFileSync(join(prefix, 'petstore.conf'), site);
  writeFileSync(
    join(prefix, 'nginx.conf'),
    [
      'pid nginx.pid;',
      'worker_processes 1;',
      // Each request in progress holds two connections, the client's and the instance's: Debian's
      // 768 would drop a crowd's (docs/scaling-out.md).
      'worker_rlimit_nofile 16384;',
      'events { worker_connections 8192; }',
      'http {',
      '  access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path temp/${kind};`),
      '  include petstore.conf;',
      '}',
      '',
    ].join('\n'),
  );
  // As root, nginx's workers would switch to nobody, who cannot use the prefix directory.
  const globals = `daemon off;${userInfo().uid === 0 ? ' user root;' : ''}`;
  const child = spawn(NGINX_BINARY, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', 'stderr', '-g', globals], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-10_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`expected nginx to keep running, it exited with ${child.exitCode}: ${log}`);
    return accepts(port);
  }, 10_000, 'nginx to listen');
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      await stopped(child, exited);
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

function replaceOnce(text: string, from: string, to: string): string {
  const parts = text.split(from);
  if (parts.length !== 2) throw new Error(`expected "${from}" once in ${SHIPPED}, found it ${parts.length - 1} times`);
  return parts.join(to);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function stopped(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    // SIGTERM: a fast stop, the master taking its worker along; open streams do not hold it up.
    child.kill('SIGTERM');
    await exited;
  }
}
