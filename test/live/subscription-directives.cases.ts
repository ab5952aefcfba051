import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../helpers/app';
import { gql } from '../helpers/gql';
import { wsUrl } from '../helpers/live';
import { captureLog, type CapturedLog } from '../helpers/log-capture';
import { acknowledgedSocket } from '../helpers/raw-socket';

/**
 * `@include`/`@skip` on a subscription's root field: graphql-js's one-root-field rule runs without
 * variable values and throws on `if: $t`. Over HTTP such a document is still the 400 of
 * docs/contract.md §8; over WebSocket an `error` message for its id, the socket left open.
 */
let t: TestApp;
let log: CapturedLog;
beforeAll(async () => {
  log = captureLog('info');
  t = await startTestApp({}, { logger: log.logger });
});
afterAll(() => t.close());

const DOCUMENTS: [string, string, Record<string, unknown>?][] = [
  ['@include with a variable', 'subscription($t: Boolean = true) { petChanged @include(if: $t) { id } }'],
  ['@skip with a variable given', 'subscription($s: Boolean!) { petChanged @skip(if: $s) { id } }', { s: false }],
  ['@include(if: false)', 'subscription { petChanged @include(if: false) { id } }'],
  ['@skip(if: false)', 'subscription { petChanged @skip(if: false) { id } }'],
  ['@include in a root fragment', 'subscription($t: Boolean = true) { ...On } fragment On on Subscription { petChanged @include(if: $t) { id } }'],
  ['@skip on a root inline fragment', 'subscription($s: Boolean = false) { ... @skip(if: $s) { petChanged { id } } }'],
];

const errorLines = () => log.lines.filter((line) => line.level >= 50);

describe.each(DOCUMENTS)('a subscription with %s on its root field', (_name, query, variables) => {
  it('is the 400 BAD_REQUEST of a subscription over HTTP, not a 500', async () => {
    const result = await gql(t.url, query, variables);
    expect(result.status).toBe(400);
    expect(result.errors).toEqual([
      expect.objectContaining({ message: expect.stringContaining('served over WebSocket at /graphql'), extensions: { code: 'BAD_REQUEST', status: 400 } }),
    ]);
    expect(errorLines()).toEqual([]);
  });

  it('is an error message for its id over WebSocket, the socket and its other subscriptions left open', async () => {
    const socket = await acknowledgedSocket(wsUrl(t));
    socket.send({ id: 'ok', type: 'subscribe', payload: { query: 'subscription { petChanged { id } }' } });
    socket.send({ id: 'x', type: 'subscribe', payload: { query, variables } });
    expect(await socket.next()).toEqual({
      id: 'x',
      type: 'error',
      payload: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED', status: 400 }) })],
    });
    socket.send({ type: 'ping' });
    expect(await socket.next()).toEqual({ type: 'pong' });
    expect(socket.socket.readyState).toBe(WebSocket.OPEN);
    socket.socket.close();
    await socket.closed;
    expect(errorLines()).toEqual([]);
  });
});
