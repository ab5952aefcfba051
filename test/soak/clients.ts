import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_STATUS } from '../../src/errors';

/** One response as a client saw it. */
export interface Exchange {
  /** When the request was sent, and when its answer was read. */
  sentAt: number;
  at: number;
  client: string;
  status: number;
  /** The Error code of a 4xx/5xx body, or of the first GraphQL error. */
  code?: string;
}

/** An order the gateway told a client about. */
export interface ToldOrder {
  idempotencyKey: string;
  apiKey: string;
  id: string;
  petId: string;
  quantity: number;
}

/** A request a key-limited client got admitted: the minute window it counted in, by its reset. */
export interface Admission {
  client: string;
  windowReset: number;
}

export class Recorder {
  readonly exchanges: Exchange[] = [];
  readonly orders = new Map<string, ToldOrder>();
  /** Idempotency keys answered with two different orders (must stay empty). */
  readonly conflicting: string[] = [];
  readonly admissions: Admission[] = [];
  /** Requests that got no HTTP answer at all from the load balancer. */
  noAnswer = 0;
}

export interface LoadOptions {
  url: string;
  recorder: Recorder;
  stop: () => boolean;
  petIds: string[];
  readerKeys: string[];
  orderKeys: string[];
  limitedKeys: string[];
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | undefined;
}

async function send(options: LoadOptions, client: string, path: string, init: RequestInit): Promise<Answer | undefined> {
  const sentAt = Date.now();
  try {
    const response = await fetch(`${options.url}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
    const text = await response.text();
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    options.recorder.exchanges.push({ sentAt, at: Date.now(), client, status: response.status, code: errorCode(body) });
    return { status: response.status, headers: response.headers, body };
  } catch {
    options.recorder.noAnswer += 1;
    return undefined;
  }
}

function errorCode(body: Record<string, unknown> | undefined): string | undefined {
  if (!body) return undefined;
  const errors = body.errors as { extensions?: { code?: string } }[] | undefined;
  if (errors?.length) return errors[0].extensions?.code ?? 'NO_CODE';
  return typeof body.code === 'string' ? body.code : undefined;
}

const graphql = (key: string, query: string, variables?: Record<string, unknown>): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
  body: JSON.stringify({ query, variables }),
});

const PETS = '{ pets(first: 5) { totalCount edges { node { id name } } } }';
const PLACE_ORDER = `mutation($input: NewOrder!, $key: String) {
  placeOrder(input: $input, idempotencyKey: $key) { id petId quantity }
}`;
const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)];

/** Catalogue reads over GraphQL, about 6 a second per loop. */
async function reader(options: LoadOptions, index: number): Promise<void> {
  const key = options.readerKeys[index % options.readerKeys.length];
  while (!options.stop()) {
    await send(options, 'catalogue', '/graphql', graphql(key, PETS));
    await sleep(150);
  }
}

/** Legacy REST reads, about 4 a second per loop. */
async function restReader(options: LoadOptions, index: number): Promise<void> {
  const key = options.readerKeys[index % options.readerKeys.length];
  while (!options.stop()) {
    await send(options, 'rest', `/pets/${pick(options.petIds)}`, { headers: { Accept: 'application/json', 'X-API-Key': key } });
    await sleep(250);
  }
}

/**
 * Orders with idempotency keys, under the field limit (10 a minute per key). A failed or
 * unanswered attempt is retried with the same key; one order in five is also sent twice at once,
 * as a client retrying too early would.
 */
async function orderer(options: LoadOptions, apiKey: string): Promise<void> {
  while (!options.stop()) {
    const idempotencyKey = randomUUID();
    const input = { petId: pick(options.petIds), quantity: 1 + Math.floor(Math.random() * 3) };
    const attempt = () => send(options, 'orders', '/graphql', graphql(apiKey, PLACE_ORDER, { input, key: idempotencyKey }));
    for (let tries = 0; tries < 20; tries += 1) {
      const answers = await Promise.all(Math.random() < 0.2 && tries === 0 ? [attempt(), attempt()] : [attempt()]);
      let settled = false;
      for (const answer of answers) {
        const order = (answer?.body?.data as { placeOrder?: { id: string; petId: string; quantity: number } } | undefined)?.placeOrder;
        if (order) {
          const told = options.recorder.orders.get(idempotencyKey);
          if (told && told.id !== order.id) options.recorder.conflicting.push(idempotencyKey);
          options.recorder.orders.set(idempotencyKey, { idempotencyKey, apiKey, ...order });
          settled = true;
        } else if (answer && answer.status < 500 && errorCode(answer.body) !== 'RATE_LIMITED') {
          settled = true; // refused for good (out of stock, say): a client gives up
        }
      }
      if (settled) break;
      await sleep(500);
    }
    await sleep(6_500);
  }
}

/**
 * A client of a FREE key asking more often than 60 a minute; it waits out Retry-After when
 * refused, as a well-behaved client does. Each admitted request is recorded with its window.
 */
async function limited(options: LoadOptions, key: string, index: number): Promise<void> {
  const client = `limited-${index}`;
  while (!options.stop()) {
    const answer = await send(options, client, '/graphql', graphql(key, '{ __typename }'));
    if (answer?.status === 200) {
      // The minute window runs out first: X-RateLimit-Reset is its end, the same on every instance sharing Redis.
      const reset = Number(answer.headers.get('X-RateLimit-Reset'));
      if (reset > 0) options.recorder.admissions.push({ client, windowReset: reset });
    }
    const retryAfter = Number(answer?.headers.get('Retry-After') ?? 0);
    await sleep(retryAfter > 0 ? retryAfter * 1000 : 500);
  }
}

export function runLoad(options: LoadOptions): Promise<void[]> {
  return Promise.all([
    ...[0, 1, 2, 3].map((i) => reader(options, i)),
    ...[0, 1].map((i) => restReader(options, i)),
    ...options.orderKeys.map((key) => orderer(options, key)),
    ...options.limitedKeys.map((key, i) => limited(options, key, i)),
  ]);
}

/** Whether a response is one the contract allows: 2xx, or a 4xx/5xx carrying a §6 code with its status. */
export function documented(exchange: Exchange): boolean {
  if (exchange.status >= 200 && exchange.status < 300) return exchange.code === undefined || exchange.code !== 'INTERNAL_SERVER_ERROR';
  const code = exchange.code as keyof typeof ERROR_STATUS | undefined;
  return code !== undefined && code in ERROR_STATUS && ERROR_STATUS[code] === exchange.status && exchange.status !== 500;
}
