import { setTimeout as sleep } from 'node:timers/promises';

/** One answer of the load: which instance, when it came (epoch ms), its status (0: no answer). */
export interface Answer {
  instance: number;
  key: string;
  surface: 'graphql' | 'rest';
  status: number;
  at: number;
}

const QUERY = JSON.stringify({ query: '{ pets(first: 1) { totalCount } }' });

/**
 * A steady, bounded load: per instance and key, one client sending a GraphQL query and a REST
 * read in turn, each waiting for its answer and then `paceMs` before the next, so that the rate
 * stays the same whether the answers are 200s or quick 503s. Every answer is recorded.
 */
export class SteadyLoad {
  readonly answers: Answer[] = [];
  private running = true;
  private readonly clients: Promise<void>[];

  constructor(urls: readonly string[], keys: readonly string[], paceMs = 40) {
    this.clients = urls.flatMap((url, instance) => keys.map((key) => this.client(url, instance, key, paceMs)));
  }

  /** The answers of `instance` since `from` (epoch ms). */
  since(from: number, instance?: number): Answer[] {
    return this.answers.filter((answer) => answer.at >= from && (instance === undefined || answer.instance === instance));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.clients);
  }

  private async client(url: string, instance: number, key: string, paceMs: number): Promise<void> {
    for (let turn = 0; this.running; turn += 1) {
      const surface = turn % 2 === 0 ? 'graphql' : 'rest';
      const status = await send(url, key, surface);
      this.answers.push({ instance, key, surface, status, at: Date.now() });
      await sleep(paceMs);
    }
  }
}

async function send(url: string, key: string, surface: 'graphql' | 'rest'): Promise<number> {
  const headers = { 'X-API-Key': key, Accept: 'application/json', 'Content-Type': 'application/json' };
  try {
    const response =
      surface === 'graphql'
        ? await fetch(`${url}/graphql`, { method: 'POST', headers, body: QUERY, signal: AbortSignal.timeout(15_000) })
        : await fetch(`${url}/store/orders?limit=1`, { headers, signal: AbortSignal.timeout(15_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** How many answers had each status. */
export function byStatus(answers: readonly Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}
