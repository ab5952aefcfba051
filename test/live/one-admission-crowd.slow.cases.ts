import { generateApiKey } from '../../src/auth/key-secret';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { activeSubscriptions, eventually } from '../helpers/live';
import { headersOf, oneRequest, TRANSPORTS, type Who } from './transports';

/**
 * A crowd of addresses and keys behind a trusted proxy, each in its own state (quota spent,
 * banned, an invalid key...), gets the same answers over HTTP, WebSocket and SSE
 * (one-admission.cases.ts has one client past its quota): hundreds of requests spend the crowd's
 * quotas first.
 */

/** Sends `count` requests of the client over HTTP, a few at a time (within its requests in flight). */
async function sendRequests(app: TestApp, who: Who, count: number): Promise<string[]> {
  const outcomes: string[] = [];
  for (let left = count; left > 0; left -= 8) outcomes.push(...(await Promise.all(Array.from({ length: Math.min(8, left) }, () => oneRequest(app, who)))));
  return outcomes;
}

describe('a crowd', () => {
  let app: TestApp;
  beforeAll(async () => {
    // BAN_THRESHOLD 1: a client's first refusal is a 429, its second starts the ban.
    app = await startTestApp({ TRUST_PROXY: 'true', BAN_THRESHOLD: '1' });
  });
  afterAll(() => app.close());

  /** Spends what is left of the client's minute, with no refusal: its next request is over the window. */
  const spent = async (who: Who) => {
    const first = await gql(app.url, '{ __typename }', undefined, { headers: headersOf(who) });
    await sendRequests(app, who, Number(first.headers['x-ratelimit-remaining']));
    return who;
  };
  /** Spends the client's minute, then its refusals up to the ban's start (a 429, then the 403). */
  const banned = async (who: Who) => {
    await spent(who);
    expect(await oneRequest(app, who)).toBe('429 RATE_LIMITED, Retry-After');
    expect(await oneRequest(app, who)).toMatch(/^403 (API_KEY|CLIENT)_BANNED, Retry-After$/);
    return who;
  };
  /** A key of its own with a minute of one request. */
  const keyOfOne = async () => (await createApiKey(app, { plan: 'ENTERPRISE', requestsPerMinute: 1, requestsPerDay: 1_000 })).key;

  /** The crowd, with addresses of the `n`th transport's own: no transport spends another's windows. */
  const crowd = async (n: number): Promise<Record<string, Who>> => ({
    anonymous: { address: `10.${n}.0.1` },
    'anonymous, quota spent': await spent({ address: `10.${n}.0.2` }),
    'anonymous, banned': await banned({ address: `10.${n}.0.3` }),
    'invalid key': { address: `10.${n}.0.4`, key: generateApiKey() },
    'invalid key, address quota spent': { ...(await spent({ address: `10.${n}.0.5` })), key: generateApiKey() },
    'FREE key': { address: `10.${n}.0.6`, key: (await createApiKey(app, { plan: 'FREE' })).key },
    'key, quota spent': await spent({ address: `10.${n}.0.7`, key: await keyOfOne() }),
    'banned key': await banned({ address: `10.${n}.0.8`, key: await keyOfOne() }),
  });

  it('refuses the same crowd alike over HTTP, WebSocket and SSE: the same codes, statuses and Retry-After', async () => {
    const outcomes: Record<string, Record<string, string>> = {};
    for (const [n, [name, send]] of Object.entries(TRANSPORTS).entries()) {
      outcomes[name] = {};
      for (const [member, who] of Object.entries(await crowd(n))) outcomes[name][member] = await send(app, who);
    }
    // A refusal at connection_init closes the socket with the §9 code (4403, or 4429 for RATE_LIMITED) and the §6 code as reason.
    const request = {
      anonymous: 'admitted',
      'anonymous, quota spent': '429 RATE_LIMITED, Retry-After',
      'anonymous, banned': '403 CLIENT_BANNED, Retry-After',
      'invalid key': '401 INVALID_API_KEY',
      'invalid key, address quota spent': '429 RATE_LIMITED, Retry-After',
      'FREE key': 'admitted',
      'key, quota spent': '429 RATE_LIMITED, Retry-After',
      'banned key': '403 API_KEY_BANNED, Retry-After',
    };
    const socket = {
      ...request,
      'anonymous, banned': 'closed 4403 CLIENT_BANNED',
      'invalid key': 'closed 4403 INVALID_API_KEY',
      'invalid key, address quota spent': 'closed 4429 RATE_LIMITED',
      'banned key': 'closed 4403 API_KEY_BANNED',
    };
    expect(outcomes).toEqual({ http: request, websocket: socket, sse: request });
    await eventually(async () => (await activeSubscriptions(app)) === 0);
  }, 60_000);
});
