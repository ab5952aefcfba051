import { appendFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** Requests of the `crowd` scenario's victims, by their keys (fixture.ts victimKey). */
const VICTIM_KEY = /^psk_bench(pro|business)/;

/**
 * BENCH_LOOP_TRACE_DIR: a line a second from each gateway contender, in a file named after its
 * process: connections accepted and closed, requests, how late its timers ran (p50, p99, max),
 * its event loop's utilization against its process CPU (a loop busy 100% of the time while the
 * process runs 20% of a core waits for the machine, not for its own work), and the `crowd`
 * scenario's victims' requests: how many, how many came on a new connection, and the slowest from
 * the request's arrival to its answer (what a victim waits beyond that, it waited before the
 * gateway read its request: in the kernel's accept queue or behind a long turn).
 */
export function traceLoop(server: Server, directory: string): void {
  const file = `${directory}/gateway-${process.pid}.log`;
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const served = new WeakMap<object, number>();
  const victims: number[] = [];
  let accepted = 0;
  let closed = 0;
  let requests = 0;
  let victimsOnNewConnections = 0;
  server.on('connection', (socket) => {
    accepted += 1;
    socket.once('close', () => (closed += 1));
  });
  server.on('request', (req, res) => {
    requests += 1;
    const nth = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, nth);
    if (!VICTIM_KEY.test(String(req.headers['x-api-key'] ?? ''))) return;
    if (nth === 1) victimsOnNewConnections += 1;
    const arrived = performance.now();
    res.once('finish', () => victims.push(performance.now() - arrived));
  });
  let utilization = performance.eventLoopUtilization();
  let cpu = process.cpuUsage();
  const ms = (ns: number) => (ns / 1e6).toFixed(0);
  setInterval(() => {
    const nowUtilization = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(nowUtilization, utilization).utilization;
    const spent = process.cpuUsage(cpu);
    utilization = nowUtilization;
    cpu = process.cpuUsage();
    const slowest = victims.reduce((a, b) => Math.max(a, b), 0);
    appendFileSync(
      file,
      `${new Date().toISOString().slice(11, 19)} accepted ${accepted} closed ${closed} requests ${requests} ` +
        `timers late p50 ${ms(delay.percentile(50))} p99 ${ms(delay.percentile(99))} max ${ms(delay.max)} ms ` +
        `loop busy ${(busy * 100).toFixed(0)}% cpu ${((spent.user + spent.system) / 1e4).toFixed(0)}% ` +
        `victims ${victims.length} on new connections ${victimsOnNewConnections} slowest ${slowest.toFixed(0)} ms\n`,
    );
    accepted = closed = requests = victimsOnNewConnections = 0;
    victims.length = 0;
    delay.reset();
  }, 1000).unref();
}
