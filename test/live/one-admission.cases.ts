import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, eventually, liveClient, subscribe } from '../helpers/live';
import { INVENTORY } from './transports';

/**
 * One admission for every transport (docs/contract.md §5, §9): every request, subscribe and stream
 * is identified by the one function and admitted by the one admitter. The same client sending past
 * its quota over HTTP, as WebSocket subscribes, and as SSE streams is admitted and refused alike —
 * the window's 429s, then, past BAN_THRESHOLD refusals, the ban's 403s, each saying when to come
 * back; a socket whose key is banned is then closed 4403 with the ban's code (§9). A crowd of
 * addresses and keys (behind a trusted proxy) gets the same answers over each
 * (one-admission-crowd.slow.cases.ts); so does a crowd member that a busy loop sheds by its
 * priority (one-admission-shedding.slow.cases.ts).
 */
const QUOTA = 10;
const SENT = 14;

let t: TestApp;

/** A client of its own for each transport, so that one transport's refusals do not spend another's quota. */
const freshKey = async () => (await createApiKey(t, { plan: 'ENTERPRISE', requestsPerMinute: QUOTA, requestsPerDay: 1_000 })).key;

/** What one request or subscribe got: admitted, or its refusal's code and whether it said when to retry. */
const refused = (code: string, retryAfter: unknown) => `${code}${Number(retryAfter) > 0 ? ', retry after' : ''}`;

async function overHttp(key: string): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < SENT; i += 1) {
    const result = await gql(t.url, '{ __typename }', undefined, { key });
    outcomes.push(result.status === 200 ? 'admitted' : refused(result.errors?.[0].extensions.code ?? String(result.status), result.headers['retry-after']));
  }
  return outcomes;
}

async function overWebSocket(key: string): Promise<string[]> {
  const client = liveClient(t, key);
  const outcomes: string[] = [];
  const feeds = [];
  try {
    for (let i = 0; i < SENT; i += 1) {
      const before = await activeSubscriptions(t);
      const feed = subscribe(client, INVENTORY);
      feeds.push(feed);
      await eventually(async () => feed.error !== undefined || (await activeSubscriptions(t)) > before);
      const [error] = Array.isArray(feed.error) ? feed.error : [];
      outcomes.push(feed.error === undefined ? 'admitted' : error ? refused(error.extensions.code, error.extensions.retryAfter) : `closed ${feed.error.code} ${feed.error.reason}`);
    }
  } finally {
    feeds.forEach((feed) => feed.stop());
    await client.dispose();
  }
  return outcomes;
}

async function overSse(key: string): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < SENT; i += 1) {
    const response = await fetch(`${t.url}/graphql/stream`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json', 'X-API-Key': key },
      body: JSON.stringify({ query: INVENTORY }),
    });
    if (response.status === 200) {
      outcomes.push('admitted');
      await response.body?.cancel();
    } else {
      const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
      outcomes.push(refused(body.errors[0].extensions.code, response.headers.get('retry-after')));
    }
  }
  return outcomes;
}

describe('one client past its quota', () => {
  beforeAll(async () => {
    t = await startTestApp({ BAN_THRESHOLD: '2' });
  });
  afterAll(() => t.close());

  it('refuses the same client past its quota alike over HTTP, WebSocket subscribes and SSE streams', async () => {
    const expected = [...Array(QUOTA).fill('admitted'), ...Array(2).fill('RATE_LIMITED, retry after'), ...Array(SENT - QUOTA - 2).fill('API_KEY_BANNED, retry after')];
    const http = await overHttp(await freshKey());
    const websocket = await overWebSocket(await freshKey());
    const sse = await overSse(await freshKey());
    // The socket is closed once its key is banned: the subscribes after the first ban refusal find it so.
    const onSocket = [...expected.slice(0, QUOTA + 3), ...Array(SENT - QUOTA - 3).fill('closed 4403 API_KEY_BANNED')];
    expect({ http, websocket, sse }).toEqual({ http: expected, websocket: onSocket, sse: expected });
    await eventually(async () => (await activeSubscriptions(t)) === 0);
  });
});
