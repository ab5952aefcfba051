import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { generateApiKey } from '../../src/auth/key-secret';
import { npmStartNodeFlags } from '../helpers/npm-start-flags';
import { freePort } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';

/**
 * npm run soak -- --scenario memory: one gateway (embedded PGlite and in-memory limits unless
 * DATABASE_URL / REDIS_URL are set) under traffic whose every request is new to it (a new source
 * address in 127.0.0.0/8, a new operation name, a new document, an invalid key, an unknown or new
 * APQ hash, a burst that earns a ban) plus WebSocket and SSE streams opened and dropped, while its
 * RSS is read every 10 s. Passes when the RSS grows less than 5% over the last half of the run
 * (the last 5 minutes of the default 10). Loopback only; every loop awaits its request.
 *
 *   --duration=SECONDS    default 600
 *   --concurrency=N       HTTP loops, default 6
 */

const SAMPLE_EVERY_MS = 10_000;
const MAX_GROWTH = 0.05;
/** One request in this many is followed by a burst from an address of its own. */
const BURST_EVERY = 1_000;

interface Sample {
  seconds: number;
  rssMb: number;
  requests: number;
  cycles: number;
}

/** A counter over 127.0.0.0/8 (skipping .0 and .255 hosts): a fresh source address per call. */
function addresses() {
  let next = 1 << 8;
  return () => {
    next += 1;
    if ((next & 0xff) === 0 || (next & 0xff) === 0xff) next += 2;
    return `127.${(next >> 16) & 0xff}.${(next >> 8) & 0xff}.${next & 0xff}`;
  };
}

/** One POST from `localAddress` on a connection of its own; the status, or 0 when there was no answer. */
function post(port: number, localAddress: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        localAddress,
        agent: false,
        timeout: 20_000,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** One request of the mix, numbered `n`, from a new address. */
function mixed(port: number, n: number, address: string): Promise<number> {
  const unique = `${n}_${randomBytes(4).toString('hex')}`;
  switch (n % 7) {
    case 0:
      return post(port, address, '/graphql', { query: `query Op_${unique} { pets(first: 1) { totalCount } }`, operationName: `Op_${unique}` });
    case 1:
      return post(port, address, '/graphql', { query: `{ pets(first: 2) { nodes { name } } a_${unique}: __typename }` });
    case 2:
      return post(port, address, '/graphql', { query: '{ __typename }' }, { 'X-API-Key': generateApiKey() });
    case 3:
      return post(port, address, '/graphql', { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(unique) } } });
    case 4: {
      const query = `{ b_${unique}: __typename }`;
      return post(port, address, '/graphql', { query, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } } });
    }
    case 5:
      return post(port, address, '/graphql', { query: `{ pets(first: 1) { c_${unique} } }` });
    default:
      return post(port, address, `/pets/${n}`, {}, { 'X-API-Key': `garbage-${unique}` });
  }
}

/** Past its minute's 60 requests, then on until banned: what an abusive address leaves behind. */
async function burst(port: number, address: string, stop: () => boolean): Promise<number> {
  let sent = 0;
  for (let i = 0; i < 80 && !stop(); i += 1) {
    sent += 1;
    if ((await post(port, address, '/graphql', { query: '{ __typename }' })) === 403) break;
  }
  return sent;
}

/** A WebSocket that subscribes and is then dropped, from `address`. */
function socketCycle(port: number, address: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws', { localAddress: address });
    const done = () => {
      clearTimeout(timer);
      socket.terminate();
      resolve();
    };
    const timer = setTimeout(done, 10_000);
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} })));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string };
      if (message.type !== 'connection_ack') return done();
      socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { inventoryChanged { quantity } }' } }));
      // Dropped once the subscription is in place (or a moment later at most), without a goodbye.
      setTimeout(done, 50);
    });
    socket.on('error', done);
    socket.on('close', done);
  });
}

/** An SSE stream that opens and is then dropped, from `address`. */
function streamCycle(port: number, address: string): Promise<void> {
  const payload = JSON.stringify({ query: 'subscription { inventoryChanged { quantity } }' });
  return new Promise((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/graphql/stream',
      method: 'POST',
      localAddress: address,
      agent: false,
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'Content-Length': Buffer.byteLength(payload) },
    });
    const timer = setTimeout(() => req.destroy(), 10_000);
    req.on('response', (res) => {
      res.once('data', () => req.destroy());
      res.on('end', () => req.destroy());
    });
    req.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    req.on('error', () => undefined);
    req.end(payload);
  });
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

async function ready(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3_000) })).status === 200;
  } catch {
    return false;
  }
}

export async function memorySoak(flag: (name: string) => string | undefined): Promise<boolean> {
  const duration = Number(flag('duration') ?? 600) * 1000;
  const concurrency = Number(flag('concurrency') ?? 6);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    NODE_ENV: 'production',
    ADMIN_API_KEY: generateApiKey(),
  };
  const child: ChildProcess = spawn(process.execPath, [...npmStartNodeFlags(), 'dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const pid = child.pid as number;
  let stopping = false;
  const stop = () => stopping;
  try {
    await waitFor(() => ready(port), 60_000, 'the gateway to be ready');
    const mode = process.env.DATABASE_URL ? 'services' : 'embedded';
    console.log(`memory soak: ${mode}, ${duration / 1000} s, ${concurrency} HTTP loops, 1 WebSocket loop, 1 SSE loop; gateway pid ${pid}`);

    const next = addresses();
    let requests = 0;
    let mixedSent = 0;
    let cycles = 0;
    const statuses = new Map<number, number>();
    const httpLoop = async (loop: number) => {
      for (let n = loop; !stopping; n += concurrency) {
        mixedSent += 1;
        if (mixedSent % BURST_EVERY === 0) {
          const sent = await burst(port, next(), stop);
          requests += sent;
        }
        const status = await mixed(port, n, next());
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        requests += 1;
      }
    };
    const cycleLoop = async (cycle: (port: number, address: string) => Promise<void>) => {
      while (!stopping) {
        await cycle(port, next());
        cycles += 1;
      }
    };
    const started = Date.now();
    const samples: Sample[] = [{ seconds: 0, rssMb: rssMb(pid), requests: 0, cycles: 0 }];
    const print = (sample: Sample) =>
      console.log(`${String(sample.seconds).padStart(4)} s  RSS ${sample.rssMb.toFixed(1).padStart(7)} MB  ${sample.requests} requests  ${sample.cycles} socket/stream cycles`);
    print(samples[0]);
    const load = Promise.all([...Array.from({ length: concurrency }, (_, i) => httpLoop(i)), cycleLoop(socketCycle), cycleLoop(streamCycle)]);
    while (Date.now() - started < duration) {
      await sleep(SAMPLE_EVERY_MS - ((Date.now() - started) % SAMPLE_EVERY_MS));
      const sample = { seconds: Math.round((Date.now() - started) / 1000), rssMb: rssMb(pid), requests, cycles };
      samples.push(sample);
      print(sample);
    }
    stopping = true;
    await load;

    console.log(`statuses of the mixed requests: ${[...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status} × ${count}`).join(', ')}`);
    const end = samples[samples.length - 1];
    const mid = samples.reduce((best, s) => (Math.abs(s.seconds - end.seconds / 2) < Math.abs(best.seconds - end.seconds / 2) ? s : best));
    const growth = (end.rssMb - mid.rssMb) / mid.rssMb;
    const passed = growth < MAX_GROWTH;
    console.log(
      `\nRSS ${samples[0].rssMb.toFixed(1)} MB at the start, ${mid.rssMb.toFixed(1)} MB at ${mid.seconds} s, ${end.rssMb.toFixed(1)} MB at ${end.seconds} s: ` +
        `${(growth * 100).toFixed(1)}% over the last half (bound ${MAX_GROWTH * 100}%): ${passed ? 'passed' : 'FAILED'}`,
    );
    return passed;
  } finally {
    stopping = true;
    child.kill('SIGTERM');
  }
}
