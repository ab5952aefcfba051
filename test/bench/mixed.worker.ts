import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { percentile } from './results';

/**
 * The `mixed` scenario's load (mixed.ts), in a process of its own: argv[2] is a MixedTask as JSON.
 * Closed loops, `connections` on each instance, each sending its next request once answered:
 * a catalogue read of the corpus over a random hot pet, or, one time in 1/writeShare, a write
 * (updateInventory or updatePet) with the writer's key. Beside them, one probe measures how long
 * the other instance answers the old value after a write (its own writes, on pets only it writes).
 * Prints a MixedResult as JSON. A warm-up task sends every read over every hot pet once to each instance instead.
 */
export interface MixedTask {
  ports: number[];
  seconds: number;
  connections: number;
  /** Reads and writes pick among the pets 1..hotPets; the probe's pets, 1..probePets, are written by the probe only. */
  hotPets: number;
  probePets: number;
  writeShare: number;
  readerKeys: string[];
  /** The probe's reads: a reader that never writes, so that no read-your-writes rule bypasses its cache. */
  probeKey: string;
  writerKey: string;
  /** Makes this run's written values differ from every other run's. */
  runId: number;
  /** The probe waits this long between samples, and gives up on one after timeoutMs. */
  probeEveryMs: number;
  probeTimeoutMs: number;
  /** A warm-up: every read of the corpus over every hot pet, once on each instance, then done (no writes, no time bound). */
  warmUp?: boolean;
}

export interface MixedFigures {
  requests: number;
  p50: number;
  p99: number;
  /** Answers that were not what was asked (a status but 200, errors, no data). */
  failed: number;
}

export interface MixedResult {
  requests: number;
  seconds: number;
  all: MixedFigures;
  reads: MixedFigures;
  writes: MixedFigures;
  /** The reads' answers by X-Cache (`none` when absent). */
  cache: Record<string, number>;
  statuses: Record<string, number>;
  /** The start of the first failed answer of each kind. */
  samples: Record<string, string>;
  /** Per sampled write: ms from its answer to the last stale answer the other instance gave (0: none), and to the first fresh one. */
  staleness: { lastStaleMs: number; firstFreshMs: number }[];
  /** Sampled writes whose new value the other instance had not answered within probeTimeoutMs. */
  probeTimeouts: number;
  /** The probe's X-Cache: its read before each write (was the answer held?), and its first read after. */
  probeXCache: { before: Record<string, number>; after: Record<string, number> };
}

const GRACE_MS = 10_000;

interface Answer {
  status: string;
  body: string;
  xCache: string;
}

function send(port: number, agent: Agent, key: string, body: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/graphql',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'x-api-key': key },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: String(res.statusCode), body: Buffer.concat(chunks).toString(), xCache: res.headers['x-cache']?.toString().toUpperCase() ?? 'none' }));
        res.on('error', () => resolve({ status: 'error', body: '', xCache: 'none' }));
      },
    );
    req.setTimeout(GRACE_MS, () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ status: error.message === 'timeout' ? 'timeout' : 'error', body: '', xCache: 'none' }));
    req.end(body);
  });
}

/** The catalogue reads: a few documents a front end sends, over a pet (or its category). */
const READS: { field: string; query: string; variables: (pet: number) => Record<string, string> }[] = [
  { field: 'pet', query: 'query PetCard($id: ID!) { pet(id: $id) { id name status category { id name } } }', variables: (pet) => ({ id: String(pet) }) },
  { field: 'pet', query: 'query PetStock($id: ID!) { pet(id: $id) { id name inventory { quantity status } } }', variables: (pet) => ({ id: String(pet) }) },
  { field: 'inventoryItem', query: 'query Stock($petId: ID!) { inventoryItem(petId: $petId) { petId quantity status } }', variables: (pet) => ({ petId: String(pet) }) },
  {
    field: 'category',
    query: 'query CategoryPets($id: ID!) { category(id: $id) { id name pets(first: 10) { nodes { id name } } } }',
    // The fixture's pet n is in category 1 + n % 20.
    variables: (pet) => ({ id: String(1 + (pet % 20)) }),
  },
];
const RESTOCK = 'mutation Restock($petId: ID!, $quantity: Int!) { updateInventory(petId: $petId, input: { quantity: $quantity }) { petId quantity } }';
const RENAME = 'mutation Rename($id: ID!, $name: String!) { updatePet(id: $id, input: { name: $name }) { id name } }';

const body = (query: string, variables: Record<string, unknown>) => JSON.stringify({ query, variables });
const answered = (answer: Answer, field: string) => answer.status === '200' && answer.body.startsWith(`{"data":{"${field}":{`) && !answer.body.includes('"errors"');

class Tally {
  readonly latencies = { reads: [] as number[], writes: [] as number[] };
  readonly failed = { reads: 0, writes: 0 };
  readonly cache: Record<string, number> = {};
  readonly statuses: Record<string, number> = {};
  readonly samples: Record<string, string> = {};

  add(kind: 'reads' | 'writes', ms: number, answer: Answer, ok: boolean): void {
    this.latencies[kind].push(ms);
    this.statuses[answer.status] = (this.statuses[answer.status] ?? 0) + 1;
    if (kind === 'reads') this.cache[answer.xCache] = (this.cache[answer.xCache] ?? 0) + 1;
    if (ok) return;
    this.failed[kind] += 1;
    const label = `${kind} ${answer.status}`;
    if (!(label in this.samples)) this.samples[label] = answer.body.slice(0, 300);
  }
}

async function loop(task: MixedTask, port: number, agent: Agent, tally: Tally, deadline: number, next: () => number): Promise<void> {
  const loadPets = task.hotPets - task.probePets;
  while (performance.now() < deadline) {
    const start = performance.now();
    if (Math.random() < task.writeShare) {
      const pet = task.probePets + 1 + Math.floor(Math.random() * loadPets);
      const seq = next();
      const [field, text] =
        seq % 2 ? ['updateInventory', body(RESTOCK, { petId: String(pet), quantity: 1 + ((task.runId * 7919 + seq) % 1_000_000) })] : ['updatePet', body(RENAME, { id: String(pet), name: `Pet ${pet} r${task.runId}.${seq}` })];
      const answer = await send(port, agent, task.writerKey, text);
      tally.add('writes', performance.now() - start, answer, answered(answer, field));
    } else {
      const read = READS[Math.floor(Math.random() * READS.length)];
      const pet = 1 + Math.floor(Math.random() * task.hotPets);
      const key = task.readerKeys[Math.floor(Math.random() * task.readerKeys.length)];
      const answer = await send(port, agent, key, body(read.query, read.variables(pet)));
      tally.add('reads', performance.now() - start, answer, answered(answer, read.field));
    }
  }
}

/**
 * One sampled write after another: read the pet on the other instance (its answer cached there,
 * if it was not already), write a new value through the first, then ask the other until it
 * answers the new value. Alternates instances, pets and the kind of write.
 */
async function probe(task: MixedTask, deadline: number, agent: Agent): Promise<Pick<MixedResult, 'staleness' | 'probeTimeouts' | 'probeXCache'>> {
  const staleness: MixedResult['staleness'] = [];
  let probeTimeouts = 0;
  const probeXCache = { before: {} as Record<string, number>, after: {} as Record<string, number> };
  const count = (counts: Record<string, number>, answer: Answer) => (counts[answer.xCache] = (counts[answer.xCache] ?? 0) + 1);
  // A sample begins only within the run, and may end after it (at most probeTimeoutMs later).
  for (let sample = 0; performance.now() + task.probeEveryMs < deadline; sample += 1) {
    await new Promise((resolve) => setTimeout(resolve, task.probeEveryMs));
    const [writeTo, readFrom] = sample % 2 ? [task.ports[1], task.ports[0]] : [task.ports[0], task.ports[1]];
    const pet = 1 + (sample % task.probePets);
    const restock = Math.floor(sample / task.probePets) % 2 === 1;
    const value = restock ? 900_000 + ((task.runId * 7919 + sample) % 100_000) : `Pet ${pet} p${task.runId}.${sample}`;
    const read = restock ? READS[1] : READS[0];
    const fresh = restock ? new RegExp(`"quantity":${value}[,}]`) : new RegExp(`"name":${JSON.stringify(value)}[,}]`);
    const ask = () => send(readFrom, agent, task.probeKey, body(read.query, read.variables(pet)));
    count(probeXCache.before, await ask());
    const written = await send(writeTo, agent, task.writerKey, restock ? body(RESTOCK, { petId: String(pet), quantity: value }) : body(RENAME, { id: String(pet), name: value }));
    if (!answered(written, restock ? 'updateInventory' : 'updatePet')) throw new Error(`mixed: the probe's write failed: ${written.status} ${written.body.slice(0, 300)}`);
    const committed = performance.now();
    let lastStaleMs = 0;
    for (let poll = 0; ; poll += 1) {
      const answer = await ask();
      if (poll === 0) count(probeXCache.after, answer);
      const at = performance.now() - committed;
      if (answered(answer, 'pet') && fresh.test(answer.body)) {
        staleness.push({ lastStaleMs: Number(lastStaleMs.toFixed(2)), firstFreshMs: Number(at.toFixed(2)) });
        break;
      }
      lastStaleMs = at;
      if (at > task.probeTimeoutMs) {
        probeTimeouts += 1;
        break;
      }
    }
  }
  return { staleness, probeTimeouts, probeXCache };
}

/** The warm-up: each instance's connections share the list of every read over every hot pet until it is done. */
async function warmUp(task: MixedTask, agents: Agent[], tally: Tally): Promise<void> {
  const reads = READS.flatMap((read) => Array.from({ length: task.hotPets }, (_, i) => ({ read, pet: i + 1 })));
  await Promise.all(
    task.ports.flatMap((port, i) => {
      const queue = [...reads];
      return Array.from({ length: task.connections }, async () => {
        for (let next = queue.pop(); next; next = queue.pop()) {
          const start = performance.now();
          const answer = await send(port, agents[i], task.readerKeys[0], body(next.read.query, next.read.variables(next.pet)));
          tally.add('reads', performance.now() - start, answer, answered(answer, next.read.field));
        }
      });
    }),
  );
}

const figures = (latencies: number[], failed: number): MixedFigures => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { requests: sorted.length, p50: Number(percentile(sorted, 50).toFixed(1)), p99: Number(percentile(sorted, 99).toFixed(1)), failed };
};

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2]) as MixedTask;
  const began = performance.now();
  const deadline = began + task.seconds * 1000;
  const tally = new Tally();
  let seq = 0;
  const agents = task.ports.map(() => new Agent({ keepAlive: true, maxSockets: task.connections }));
  const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const loops = task.warmUp ? [warmUp(task, agents, tally)] : task.ports.flatMap((port, i) => Array.from({ length: task.connections }, () => loop(task, port, agents[i], tally, deadline, () => (seq += 1))));
  const [sampled] = await Promise.all([task.probePets > 0 ? probe(task, deadline, probeAgent) : { staleness: [], probeTimeouts: 0, probeXCache: { before: {}, after: {} } }, ...loops]);
  const seconds = (performance.now() - began) / 1000;
  [...agents, probeAgent].forEach((agent) => agent.destroy());
  const { reads, writes } = tally.latencies;
  const result: MixedResult = {
    requests: reads.length + writes.length,
    seconds,
    all: figures([...reads, ...writes], tally.failed.reads + tally.failed.writes),
    reads: figures(reads, tally.failed.reads),
    writes: figures(writes, tally.failed.writes),
    cache: tally.cache,
    statuses: tally.statuses,
    samples: tally.samples,
    ...sampled,
  };
  process.stdout.write(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
