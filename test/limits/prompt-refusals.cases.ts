import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { BURST_QUERY } from '../helpers/burst';
import { createApiKey } from '../helpers/builders';
import { printFigure } from '../helpers/figures';

/**
 * A burst over a quota is answered at once, every request of it (docs/contract.md §5): the quota's
 * worth with 200, each of the others with 429 and Retry-After, none of them kept waiting for the
 * window to free. The gateway runs as it ships (the in-flight bound on); bans are set past the
 * burst so that every refusal is the window's own 429.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ TRUST_PROXY: 'true', BAN_THRESHOLD: '1000' });
});
afterAll(() => t.close());

type Send = () => request.Test;

/** Sends `count` requests at once and waits for every answer. */
async function burstOf(count: number, send: Send): Promise<request.Response[]> {
  return Promise.all(Array.from({ length: count }, () => send()));
}

/** How many answers had each status, and whether every refusal said when to come back, and why. */
function outcome(responses: request.Response[]) {
  const refused = responses.filter((response) => response.status !== 200);
  return {
    ok: responses.length - refused.length,
    rateLimited: refused.filter((response) => response.status === 429 && response.body.errors?.[0]?.extensions?.code === 'RATE_LIMITED').length,
    withoutRetryAfter: refused.filter((response) => !(Number(response.headers['retry-after']) > 0)).length,
  };
}

const viaKey = (key: string): Send => () => request(t.url).post('/graphql').set('X-API-Key', key).send(BURST_QUERY);
const fromAddress = (address: string): Send => () => request(t.url).post('/graphql').set('X-Forwarded-For', address).send(BURST_QUERY);

it('answers 150 concurrent requests of one FREE key: exactly 60 with 200, 90 with 429 and Retry-After', async () => {
  const { key } = await createApiKey(t, { plan: 'FREE' });
  const result = outcome(await burstOf(150, viaKey(key)));
  printFigure(`150 concurrent on one FREE key: ${result.ok} × 200, ${result.rateLimited} × 429`);
  expect(result).toEqual({ ok: 60, rateLimited: 90, withoutRetryAfter: 0 });
  // Refused at once again, not held for the window's end.
  expect(outcome(await burstOf(5, viaKey(key)))).toEqual({ ok: 0, rateLimited: 5, withoutRetryAfter: 0 });
});

it('answers 150 concurrent anonymous requests of one address the same, and leaves another address its own 60', async () => {
  const result = outcome(await burstOf(150, fromAddress('203.0.113.7')));
  printFigure(`150 concurrent anonymous from one address: ${result.ok} × 200, ${result.rateLimited} × 429`);
  expect(result).toEqual({ ok: 60, rateLimited: 90, withoutRetryAfter: 0 });
  expect(outcome(await burstOf(5, fromAddress('203.0.113.7')))).toEqual({ ok: 0, rateLimited: 5, withoutRetryAfter: 0 });
  expect(outcome(await burstOf(60, fromAddress('203.0.113.8')))).toEqual({ ok: 60, rateLimited: 0, withoutRetryAfter: 0 });
});
