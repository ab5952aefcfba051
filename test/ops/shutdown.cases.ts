import { connect, type Socket } from 'node:net';
import { shutDown } from '../../src/http/shutdown';
import { startTestApp, type TestApp } from '../helpers/app';
import { captureLog } from '../helpers/log-capture';
import { liveClient, subscribe, subscribed } from '../helpers/live';
import { waitFor } from '../helpers/wait';

const BODY = JSON.stringify({ query: '{ pets { totalCount } }' });

/** A POST whose body has only half arrived: a request in flight. */
async function halfSentRequest(app: TestApp): Promise<{ socket: Socket; finish(): void; response: Promise<string> }> {
  const { port } = new URL(app.url);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(`POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n`);
  socket.write(BODY.slice(0, 10));
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  const response = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  return { socket, finish: () => socket.write(BODY.slice(10)), response };
}

const stop = (app: TestApp, graceMs: number) =>
  shutDown({
    server: app.server,
    sockets: app.app.websockets,
    stopApp: () => app.app.stop(),
    closeDatabase: () => app.db.close(),
    logger: captureLog().logger,
    graceMs,
  });

it('stops accepting, lets the request in flight finish, then closes everything', async () => {
  const app = await startTestApp();
  const inFlight = await halfSentRequest(app);
  let stopped = false;
  const stopping = stop(app, 10_000).then(() => (stopped = true));
  await waitFor(() => !app.server.listening, 10_000, 'the server to stop listening');

  await expect(fetch(`${app.url}/healthz`)).rejects.toThrow();
  expect(stopped).toBe(false);

  inFlight.finish();
  const response = await inFlight.response;
  expect(response).toMatch(/^HTTP\/1.1 200 OK/);
  expect(response).toMatch(/"totalCount":0/);
  await stopping;
  expect(stopped).toBe(true);
  expect(app.db.dataSource.isInitialized).toBe(false);
});

it('cuts requests still in flight when the grace period ends', async () => {
  const app = await startTestApp();
  const stalled = await halfSentRequest(app);
  // The request never finishes by itself: stop() returns only because the grace period cut it.
  await stop(app, 300);
  await stalled.response;
  expect(stalled.socket.destroyed).toBe(true);
});

it('closes WebSockets with 1001 only once the HTTP requests in flight have finished', async () => {
  const app = await startTestApp();
  const client = liveClient(app);
  const closedAt = new Promise<{ code: number; at: number }>((resolve) =>
    client.on('closed', (event) => resolve({ code: (event as { code: number }).code, at: Date.now() })),
  );
  subscribe(client, 'subscription { petChanged { id } }');
  await subscribed(app, 1);
  const inFlight = await halfSentRequest(app);
  const stopping = stop(app, 10_000);
  await new Promise((resolve) => setTimeout(resolve, 300));

  const finishedAt = Date.now();
  inFlight.finish();
  expect(await inFlight.response).toMatch(/^HTTP\/1.1 200 OK/);
  const closed = await closedAt;
  expect(closed.code).toBe(1001);
  expect(closed.at).toBeGreaterThanOrEqual(finishedAt);
  await stopping;
  await client.dispose();
});
