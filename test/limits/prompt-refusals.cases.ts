import { startTestApp, type TestApp } from '../helpers/app';
import { BURST_QUERY } from '../helpers/burst';
import { createApiKey } from '../helpers/builders';
import { printFigure } from '../helpers/figures';

/**
 * A burst over a quota is answered at once, every request of it (docs/contract.md §5): the quota's
 * worth with 200, each of the others with 429 and Retry-After, none of them kept waiting for the
 * window to free. The gateway runs as it ships (the in-flight bound on); bans are set past the
 * burst so that every refusal is the window's own 429 however late the gateway takes the burst's
 * last connections (in-flight.cases.ts shows a burst's refusals counting toward no ban).
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ TRUST_PROXY: 'true', BAN_THRESHOLD: '1000' });
});
afterAll(() => t.close());

interface Answer {
  status: number;
  retryAfter: number;
  code?: string;
}
type Send = () => Promise<Answer>;

/**
 * Sends `count` requests at once, each on a connection of its own as fetch opens them for a
 * burst (all of them reach the gateway within a few milliseconds), and waits for every answer.
 */
async function burstOf(count: number, send: Send): Promise<Answer[]> {
  return Promise.all(Array.from({ length: count }, () => send()));
}

/** How many answers had each status, and whether every refusal said when to come back, and why. */
function outcome(answers: Answer[]) {
  const refused = answers.filter((answer) => answer.status !== 200);
  return {
    ok: answers.length - refused.length,
    rateLimited: refused.filter((answer) => answer.status === 429 && answer.code === 'RATE_LIMITED').length,
    withoutRetryAfter: refused.filter((answer) => !(answer.retryAfter > 0)).length,
  };
}

async function post(headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(BURST_QUERY) });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  return { status: response.status, retryAfter: Number(response.headers.get('retry-after')), code: body.errors?.[0]?.extensions?.code };
}

const viaKey = (key: string): Send => () => post({ 'X-API-Key': key });
const fromAddress = (address: string): Send => () => post({ 'X-Forwarded-For': address });

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
