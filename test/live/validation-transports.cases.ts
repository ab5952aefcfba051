import { createClient } from 'graphql-sse';
import type { Client } from 'graphql-ws';
import { startTestApp, type TestApp } from '../helpers/app';
import { gql } from '../helpers/gql';
import { subscribe, wsUrl } from '../helpers/live';
import { acknowledgedSocket } from '../helpers/raw-socket';

/**
 * One validation for every transport: the same invalid documents sent over HTTP, SSE and
 * WebSocket get the same errors. With introspection off, none of them names a field of the
 * schema the document did not ("Did you mean …").
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ GRAPHQL_INTROSPECTION: 'false' });
});
afterAll(() => t.close());

const INVALID = [
  ['a misspelt root field', 'subscription { petChange { id } }'],
  ['a misspelt nested field', 'subscription { petChanged { pet { nam } } }'],
  ['a misspelt argument', 'subscription { inventoryChanged(petId: ["1"]) { petId } }'],
  ['two errors', 'subscription { petChanged { kindd pet { idd } } }'],
];

/** The errors' messages as HTTP answers them, joined as a subscription's refusal joins them. */
async function overHttp(query: string): Promise<{ status: number; code: string; message: string }> {
  const result = await gql(t.url, query);
  const errors = result.errors ?? [];
  return { status: result.status, code: errors[0]?.extensions.code, message: errors.map((error) => error.message).join('; ') };
}

async function overSse(query: string): Promise<{ code: string; message: string }> {
  const client = createClient({ url: `${t.url}/graphql/stream`, fetchFn: fetch, retryAttempts: 0 });
  try {
    const feed = subscribe(client as unknown as Client, query);
    await feed.until(1);
    const [error] = feed.events[0].errors ?? [];
    return { code: error?.extensions?.code, message: error?.message };
  } finally {
    client.dispose();
  }
}

async function overWebSocket(query: string): Promise<{ code: string; message: string }> {
  const socket = await acknowledgedSocket(wsUrl(t));
  try {
    socket.send({ id: '1', type: 'subscribe', payload: { query } });
    const { payload } = (await socket.next()) as { payload: { message: string; extensions: { code: string } }[] };
    return { code: payload[0].extensions.code, message: payload[0].message };
  } finally {
    socket.socket.close();
  }
}

it.each(INVALID)('answers %s with the same errors over HTTP, SSE and WebSocket, and no suggestion', async (_name, query) => {
  const http = await overHttp(query);
  expect(http).toMatchObject({ status: 400, code: 'GRAPHQL_VALIDATION_FAILED' });
  expect(http.message).not.toMatch(/did you mean/i);
  const expected = { code: 'GRAPHQL_VALIDATION_FAILED', message: http.message };
  expect(await overSse(query)).toEqual(expected);
  expect(await overWebSocket(query)).toEqual(expected);
});
