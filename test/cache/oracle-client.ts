import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { CatalogueRequest } from './catalogue-corpus';

/** One answer as it came: its body as a string, never parsed for comparison, and when it was asked. */
export interface Exchange {
  status: number;
  body: string;
  xCache?: string;
  surrogateKey?: string;
  sentAt: number;
  receivedAt: number;
}

export interface Caller {
  /** An API key; none: anonymous, from `from`. */
  key?: string;
  /** The loopback address the request leaves from: anonymous quotas are per address. */
  from?: string;
}

export type Method = 'GET' | 'POST';

/** Idle sockets are let go well before the gateway's 5 s keep-alive timeout would close them under a request. */
const agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 2_000 });

/** The clock every exchange, observation and write is timed on. */
export const now = () => performance.now();

type Graphql = CatalogueRequest | { query: string; variables: Record<string, unknown> };

/**
 * Sends `graphql` to `baseUrl`/graphql by GET or POST as `caller`. A kept-alive socket the server
 * closed as the request left is reset before the server reads anything: sent again, once, as
 * Node's documentation advises (`request.reusedSocket`).
 */
export async function send(baseUrl: string, graphql: Graphql, caller: Caller, method: Method = 'POST'): Promise<Exchange> {
  try {
    return await sendOnce(baseUrl, graphql, caller, method);
  } catch (error) {
    if ((error as { retry?: boolean }).retry) return sendOnce(baseUrl, graphql, caller, method);
    throw error;
  }
}

function sendOnce(baseUrl: string, graphql: Graphql, caller: Caller, method: Method): Promise<Exchange> {
  const headers: Record<string, string> = { 'Apollo-Require-Preflight': 'true' };
  if (caller.key) headers['X-API-Key'] = caller.key;
  let path = '/graphql';
  let payload: string | undefined;
  if (method === 'GET') {
    path += `?${new URLSearchParams({ query: graphql.query, variables: JSON.stringify(graphql.variables) })}`;
  } else {
    payload = JSON.stringify({ query: graphql.query, variables: graphql.variables });
    headers['Content-Type'] = 'application/json';
  }
  return new Promise((resolve, reject) => {
    const sentAt = now();
    const call = request(`${baseUrl}${path}`, { method, headers, agent, localAddress: caller.from }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          xCache: header(response.headers['x-cache']),
          surrogateKey: header(response.headers['surrogate-key']),
          sentAt,
          receivedAt: now(),
        }),
      );
      response.on('error', reject);
    });
    call.on('error', (error: NodeJS.ErrnoException) => reject(Object.assign(error, { retry: call.reusedSocket && error.code === 'ECONNRESET' })));
    call.end(payload);
  });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Closes the kept-alive sockets, so that the test's process can end. */
export function closeConnections(): void {
  agent.destroy();
}
