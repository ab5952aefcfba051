import { CROWDING_REQUESTS } from '../../src/limits/admit';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { activeSubscriptions, eventually } from '../helpers/live';
import { partRequest } from '../helpers/raw-http';
import { busyLoop } from '../helpers/busy-loop';
import { headersOf, TRANSPORTS, type Who } from './transports';

/**
 * A crowd member that a busy loop sheds by its priority gets the same answer over HTTP, WebSocket
 * and SSE (one-admission.cases.ts has the quotas and the crowd's other refusals): the loop is kept
 * busy on purpose, seconds of CPU, so it runs with the slow tests.
 */

describe('shedding by priority', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Anonymous clients are shed from 30 ms late, FREE keys from 60, paying plans never.
    app = await startTestApp({ TRUST_PROXY: 'true', SHED_LOOP_DELAY_MS: '30' });
  });
  afterAll(() => app.close());

  const inFlight = async () => (await app.app.metrics.registry.getSingleMetric('petstore_requests_in_flight')?.get())?.values.find(({ labels }) => labels.state === 'running')?.value ?? 0;

  /**
   * The client's CROWDING_REQUESTS requests on the instance, held there by their bodies: it is a
   * crowd member, which a busy loop sheds by its priority.
   */
  const crowding = async (who: Who) => {
    const before = await inFlight();
    const held = await Promise.all(Array.from({ length: CROWDING_REQUESTS }, () => partRequest(app.url, { headers: headersOf(who), body: JSON.stringify({ query: '{ __typename }' }), sentBytes: 1 })));
    await eventually(async () => (await inFlight()) === before + CROWDING_REQUESTS);
    return held;
  };

  /**
   * The callers, with addresses and keys of the `n`th transport's own: a shed identity told to
   * retry has its next request within the second held until then, which no transport should wait on.
   */
  const callersOf = async (n: number): Promise<Record<string, Who>> => ({
    anonymous: { address: `10.9.${n}.1` },
    'FREE key': { address: `10.9.${n}.2`, key: (await createApiKey(app, { plan: 'FREE' })).key },
    'PRO key': { address: `10.9.${n}.3`, key: (await createApiKey(app, { plan: 'PRO' })).key },
  });

  it('sheds a low-priority crowd member alike over HTTP, WebSocket and SSE while the loop runs late, a paying key never', async () => {
    const callers = await Promise.all(Object.keys(TRANSPORTS).map((_, n) => callersOf(n)));
    const held = [];
    for (const who of callers.flatMap((each) => Object.values(each))) held.push(...(await crowding(who)));
    // Every turn of the loop spends 80 ms: past both the anonymous and the FREE delay, every sample.
    let turns = 0;
    const hog = setInterval(() => {
      busyLoop(80);
      turns += 1;
    }, 1);
    const outcomes: Record<string, Record<string, string>> = {};
    try {
      // Two turns: a sample of the loop has come between them.
      await eventually(() => turns >= 2);
      // One caller at a time: a socket's subscribe is seen admitted by the count of active
      // subscriptions, which another caller's admitted subscribe would also raise.
      for (const [n, [name, send]] of Object.entries(TRANSPORTS).entries()) {
        outcomes[name] = {};
        for (const [caller, who] of Object.entries(callers[n])) outcomes[name][caller] = await send(app, who);
      }
    } finally {
      clearInterval(hog);
      held.forEach((request) => request.reset());
    }
    const shed = '503 SERVICE_UNAVAILABLE, Retry-After';
    const expected = { anonymous: shed, 'FREE key': shed, 'PRO key': 'admitted' };
    expect(outcomes).toEqual({ http: expected, websocket: expected, sse: expected });
    await eventually(async () => (await activeSubscriptions(app)) === 0);
  }, 60_000);
});
