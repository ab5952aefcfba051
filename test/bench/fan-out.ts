import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { CHANGES_CHANNEL } from '../../src/sql/notify';
import { BENCH_KEY } from './fixture';
import { checkpointCount } from './pg-cpu';
import type { BenchServer } from './processes';

export const SOCKETS = 100;
export const SUBSCRIPTIONS_PER_SOCKET = 10;
/** Pets each subscription watches, at random among the first HOT_PETS. */
export const PETS_WATCHED = 10;
/** Changes carry their send time in ms, modulo this (the stock's ceiling), as their quantity. */
export const STAMP_MODULO = 1_000_000;

/** How the subscribers connect: graphql-ws sockets, or one SSE stream per subscription. */
export type FanOutTransport = 'graphql-ws' | 'sse';

export interface FanOutReport {
  /** Per gateway, in the worker's argv order: the latencies (ms) of the events received while measuring. */
  latencies: number[][];
  errors: number;
  /** The subscribers' own CPU while measuring (this worker's process). */
  cpuMicros: number;
  /** The subscribers' event-loop delay while measuring, p99 in ms: how late their receipts may be stamped. */
  loopDelayP99: number;
}

/**
 * Processes the subscribers are spread over (BENCH_FANOUT_WORKERS): one process parsing 1,000 SSE
 * streams on a busy machine stamps receipts late, and the bench would charge that to the gateway.
 */
export const SUBSCRIBER_PROCESSES = Number(process.env.BENCH_FANOUT_WORKERS ?? 2);

/** Stock changes a second, spread over the first HOT_PETS pets: 2,000 events a second. */
export const CHANGES_PER_SECOND = Number(process.env.BENCH_CHANGES_PER_SECOND ?? 100);
/**
 * Changes the stream keeps in flight at most, well under its key's limit (32 on ENTERPRISE): past
 * it, a change waits for an answer instead of being refused, counted toward a ban and lost.
 */
const MAX_CHANGES_IN_FLIGHT = 16;
export const HOT_PETS = 500;
const WARM_UP_MS = 2_000;

export interface FanOutRow {
  instances: number;
  transport: FanOutTransport;
  subscriptions: number;
  changesPerSecond: number;
  /** Measured on each gateway's subscribers: the first is where the changes are committed. */
  perGateway: { events: number; p50: number; p99: number }[];
  eventsPerSecond: number;
  p50: number;
  p99: number;
  cpuMsPerEvent: number;
  /** The subscribers' processes (the bench's client side), per event received. */
  clientCpuMsPerEvent: number;
  /** The changes' own round trip (the mutation's send to its answer, after its commit), p99 ms. */
  changeP99: number;
  /**
   * The changes' NOTIFY as heard by a LISTEN of the bench's own, p99 ms from the send: what the
   * subscribers' p99 would be if fanning out took no time; the difference is the gateways'.
   */
  notifyP99: number;
  /** PostgreSQL checkpoints begun while measuring (any database's): each stalls commits for a while. */
  checkpoints: number;
  /** The subscribers' processes' event-loop delay, p99 ms (the worst of them). */
  clientLoopDelayP99: number;
  failed: number;
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN);

const UPDATE = 'mutation Stock($p: ID!, $q: Int!) { updateInventory(petId: $p, input: { quantity: $q }) { quantity } }';

/**
 * The fan-out scenario: 1,000 subscriptions over 100 sockets on the given gateways, and a steady
 * stream of stock changes committed through the first. A change's quantity is the time it was
 * sent, so latency is measured from the mutation's send to the subscriber; beside it, the
 * mutations' own round trip (their commit included) and the PostgreSQL checkpoints begun meanwhile
 * tell a slow commit from a slow fan-out. CPU is every gateway's, mutations included.
 */
export async function runFanOut(gateways: BenchServer[], seconds: number, databaseUrl: string, transport: FanOutTransport = 'graphql-ws'): Promise<FanOutRow> {
  const workers = Array.from({ length: SUBSCRIBER_PROCESSES }, (_, index) =>
    fork(join(__dirname, 'fan-out.worker.js'), [JSON.stringify(gateways.map((g) => g.port)), String(HOT_PETS), transport, String(index), String(SUBSCRIBER_PROCESSES)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const reply = <T>(worker: ChildProcess, field: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (message: Record<string, unknown>) => {
        if (!(field in message)) return;
        worker.off('message', onMessage);
        resolve(message[field] as T);
      };
      worker.on('message', onMessage);
      worker.once('exit', (code) => reject(new Error(`expected the fan-out worker to answer ${field}, got exit ${code}`)));
    });
  const all = <T>(message: string, field: string) =>
    Promise.all(
      workers.map((worker) => {
        const answer = reply<T>(worker, field);
        if (message) worker.send(message);
        return answer;
      }),
    );
  try {
    await all('', 'ready');
    let failed = 0;
    const changes = changeStream(gateways[0].port, (reason) => {
      if (failed++ === 0) console.log(`fan-out: a change failed: ${reason}`);
    });
    await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
    const before = await Promise.all(gateways.map((g) => g.stats()));
    const checkpointsBefore = await checkpointCount(databaseUrl);
    const notified = await listenForStamps(databaseUrl);
    await all('start', 'started');
    changes.roundTrips.length = 0;
    notified.stamps.length = 0;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const reports = await all<FanOutReport>('stop', 'report');
    const perGateway = gateways.map((_, g) => {
      const sorted = reports.flatMap((report) => report.latencies[g]).sort((a, b) => a - b);
      return { events: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
    });
    const report = {
      perGateway,
      errors: reports.reduce((sum, each) => sum + each.errors, 0),
      cpuMicros: reports.reduce((sum, each) => sum + each.cpuMicros, 0),
      loopDelayP99: Math.max(...reports.map((each) => each.loopDelayP99)),
    };
    const roundTrips = [...changes.roundTrips].sort((a, b) => a - b);
    const notifies = [...notified.stamps].sort((a, b) => a - b);
    await notified.close();
    const after = await Promise.all(gateways.map((g) => g.stats()));
    const checkpoints = (await checkpointCount(databaseUrl)) - checkpointsBefore;
    await changes.stop();
    const events = report.perGateway.reduce((sum, g) => sum + g.events, 0);
    const cpuMs = after.reduce((sum, stats, i) => sum + (stats.cpuMicros - before[i].cpuMicros) / 1000, 0);
    // The latencies of all subscribers, weighted by their events: p50 and p99 of the worst gateway bound them.
    return {
      instances: gateways.length,
      transport,
      subscriptions: SOCKETS * SUBSCRIPTIONS_PER_SOCKET,
      changesPerSecond: CHANGES_PER_SECOND,
      perGateway: report.perGateway,
      eventsPerSecond: Math.round(events / seconds),
      p50: Math.max(...report.perGateway.map((g) => g.p50)),
      p99: Math.max(...report.perGateway.map((g) => g.p99)),
      cpuMsPerEvent: Number((cpuMs / events).toFixed(3)),
      clientCpuMsPerEvent: Number((report.cpuMicros / 1000 / events).toFixed(3)),
      clientLoopDelayP99: report.loopDelayP99,
      changeP99: percentile(roundTrips, 0.99),
      notifyP99: percentile(notifies, 0.99),
      checkpoints,
      failed: failed + report.errors,
    };
  } finally {
    for (const worker of workers) worker.send('exit');
  }
}

/** Each stock change's latency from its send to its NOTIFY reaching a listener of the bench's own. */
async function listenForStamps(databaseUrl: string): Promise<{ stamps: number[]; close(): Promise<void> }> {
  const client = new Client({ connectionString: databaseUrl });
  const stamps: number[] = [];
  client.on('notification', ({ payload }) => {
    const change = JSON.parse(payload ?? 'null') as { type?: string; quantity?: number } | null;
    if (change?.type === 'stock' && typeof change.quantity === 'number') stamps.push((Date.now() - change.quantity + STAMP_MODULO) % STAMP_MODULO);
  });
  await client.connect();
  await client.query(`LISTEN ${CHANGES_CHANNEL}`);
  return { stamps, close: () => client.end() };
}

/** Commits CHANGES_PER_SECOND stock changes a second through one gateway until stopped. */
function changeStream(port: number, onFailure: (reason: string) => void): { stop(): Promise<void>; roundTrips: number[] } {
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  const roundTrips: number[] = [];
  const send = () => {
    const petId = String(1 + (n++ % HOT_PETS));
    const sentAt = Date.now();
    const request = fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': BENCH_KEY },
      body: JSON.stringify({ query: UPDATE, variables: { p: petId, q: Date.now() % STAMP_MODULO } }),
    })
      .then(async (response) => {
        const body = (await response.json()) as { data?: { updateInventory?: unknown } };
        roundTrips.push(Date.now() - sentAt);
        if (!body.data?.updateInventory) onFailure(`${response.status} ${JSON.stringify(body).slice(0, 200)}`);
      })
      .catch((error: unknown) => onFailure(String(error)))
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };
  // Sent on a fixed schedule, not after each answer: a slow gateway does not slow the stream down
  // until MAX_CHANGES_IN_FLIGHT are waiting; the ones due then follow as answers come.
  const started = Date.now();
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) * CHANGES_PER_SECOND) / 1000);
    while (sent < due && inFlight.size < MAX_CHANGES_IN_FLIGHT) {
      sent += 1;
      send();
    }
  }, 5);
  return {
    roundTrips,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

export function fanOutTable(rows: FanOutRow[]): string {
  const header = '| instances | transport | subscriptions | changes/s | events delivered/s | p50 ms | p99 ms | per instance (events, p50, p99) | CPU ms/event | client CPU ms/event | client loop delay p99 ms | change round trip p99 ms | NOTIFY heard p99 ms | checkpoints | failed |';
  const lines = rows.map(
    (row) =>
      `| ${row.instances} | ${row.transport} | ${row.subscriptions} | ${row.changesPerSecond} | ${row.eventsPerSecond} | ${row.p50} | ${row.p99} | ` +
      `${row.perGateway.map((g, i) => `${i === 0 ? 'A' : 'B'}: ${g.events}, ${g.p50}, ${g.p99}`).join('; ')} | ${row.cpuMsPerEvent} | ${row.clientCpuMsPerEvent} | ${row.clientLoopDelayP99} | ${row.changeP99} | ${row.notifyP99} | ${row.checkpoints} | ${row.failed} |`,
  );
  return [header, '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|', ...lines].join('\n');
}
