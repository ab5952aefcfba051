import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { crowdRequestBody, type CrowdDocument, victimRequestBody } from './crowd-documents';

/**
 * The `crowd` scenario's load (crowd.ts), in a process of its own: argv[2] is a CrowdTask as JSON.
 * A crowd keeps each member's requests in flight on every instance, each answer followed at once
 * by the next; victims send at a fixed rate, whatever comes back, spread over the instances.
 * Prints its result as JSON.
 */
export interface CrowdTask {
  ports: number[];
  seconds: number;
  /** When the load starts, after the process has started: the victims open their connections meanwhile. */
  startAfterMs?: number;
  crowd?: { members: CrowdMember[]; inFlight: number; document: CrowdDocument };
  /**
   * Each key sent from its address (a client of its own), when given; over at most `pool`
   * kept-alive connections to each port, opened before the load starts (a back-end client's pool).
   */
  victims?: { keys: string[]; addresses?: string[]; perSecond: number; pets: number; pool?: number };
}

/** A member of a crowd: an anonymous client on an address of its own, or a key. */
export interface CrowdMember {
  localAddress?: string;
  key?: string;
}

export interface CrowdResult {
  /** The crowd's answers by HTTP status (`error` for a failed connection), and those that carried the counts. */
  crowd?: { statuses: Record<string, number>; served: number; samples: Record<string, string> };
  /**
   * Per victim key: answers by status (a 200 with errors counts as `200 errors`), latencies in ms,
   * and when each of those requests left, in ms from the load's start.
   */
  victims?: { statuses: Record<string, number>; latencies: number[]; sentAt: number[]; samples: Record<string, string> }[];
  /** This process's CPU time from the start of the load to its end, in µs. */
  cpuMicros: number;
}

/** A request whose socket stays silent this long is given up (counted as `timeout`). */
const GRACE_MS = 10_000;

interface Answer {
  status: string;
  body: string;
}

function send(port: number, agent: Agent, headers: Record<string, string>, body: string, path = '/graphql'): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: String(res.statusCode), body: Buffer.concat(chunks).toString() }));
        res.on('error', () => resolve({ status: 'error', body: '' }));
      },
    );
    req.setTimeout(GRACE_MS, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ status: error.message === 'timeout' ? 'timeout' : 'error', body: '' }));
    req.end(body);
  });
}

/** What came back: a count by status, and the start of the first body of each status a refusal names. */
class Tally {
  readonly statuses: Record<string, number> = {};
  readonly samples: Record<string, string> = {};

  add(status: string, body: string): void {
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
    if (!(status in this.samples) && body && status !== '200') this.samples[status] = body.slice(0, 300);
  }
}

async function runCrowd(task: CrowdTask, startAt: number, deadline: number): Promise<CrowdResult['crowd']> {
  const { members, inFlight, document } = task.crowd!;
  await untilTime(startAt);
  const tally = new Tally();
  let served = 0;
  const agents: Agent[] = [];
  const loops: Promise<void>[] = [];
  for (const member of members) {
    const agent = new Agent({ keepAlive: true, maxSockets: inFlight * task.ports.length, localAddress: member.localAddress });
    agents.push(agent);
    const headers: Record<string, string> = member.key ? { 'x-api-key': member.key } : {};
    for (const port of task.ports) {
      for (let i = 0; i < inFlight; i += 1) {
        loops.push(
          (async () => {
            while (performance.now() < deadline) {
              const answer = await send(port, agent, headers, crowdRequestBody(document));
              tally.add(answer.status, answer.body);
              if (answer.status === '200' && answer.body.includes('"data"') && !answer.body.includes('"errors"')) served += 1;
            }
          })(),
        );
      }
    }
  }
  await Promise.all(loops);
  agents.forEach((agent) => agent.destroy());
  return { statuses: tally.statuses, served, samples: tally.samples };
}

async function runVictims(task: CrowdTask, startAt: number, deadline: number): Promise<CrowdResult['victims']> {
  const { keys, addresses, perSecond, pets, pool } = task.victims!;
  return Promise.all(
    keys.map(async (key, i) => {
      const agent = new Agent({ keepAlive: true, localAddress: addresses?.[i], ...(pool ? { maxSockets: pool } : {}) });
      // The pool's connections opened before the load, by requests to /healthz, which no quota counts.
      if (pool) await Promise.all(task.ports.flatMap((port) => Array.from({ length: pool }, () => send(port, agent, {}, '', '/healthz'))));
      await untilTime(startAt);
      const tally = new Tally();
      const latencies: number[] = [];
      const sentAt: number[] = [];
      const pending: Promise<void>[] = [];
      // Open loop: the next request leaves on time, whether or not the last has come back.
      for (let n = 0; performance.now() < deadline; n += 1) {
        const start = performance.now();
        pending.push(
          send(task.ports[n % task.ports.length], agent, { 'x-api-key': key }, victimRequestBody(pets)).then((answer) => {
            latencies.push(performance.now() - start);
            sentAt.push(start - startAt);
            const refused = answer.status === '200' && !answer.body.startsWith('{"data":{"pet":{"name":');
            tally.add(refused ? '200 errors' : answer.status, answer.body);
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + 1000 / perSecond - performance.now())));
      }
      await Promise.all(pending);
      agent.destroy();
      return { statuses: tally.statuses, latencies, sentAt, samples: tally.samples };
    }),
  );
}

const untilTime = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2]) as CrowdTask;
  const startAt = performance.now() + (task.startAfterMs ?? 0);
  const deadline = startAt + task.seconds * 1000;
  let cpuAtStart = process.cpuUsage();
  void untilTime(startAt).then(() => (cpuAtStart = process.cpuUsage()));
  const [crowd, victims] = await Promise.all([task.crowd ? runCrowd(task, startAt, deadline) : undefined, task.victims ? runVictims(task, startAt, deadline) : undefined]);
  const { user, system } = process.cpuUsage(cpuAtStart);
  const result: CrowdResult = { crowd, victims, cpuMicros: user + system };
  process.stdout.write(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
