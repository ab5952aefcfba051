import { LINGER_MS } from '../../src/http/lingering-close';
import { startTestApp, type TestApp } from '../helpers/app';
import { exchange } from '../helpers/raw-http';

/**
 * A body that never ends (http-edges.cases.ts has the other bodies past the limit): its 413 is
 * written at once, and the connection closed when the lingering close's LINGER_MS has run out.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

it('answers a body that never ends 413, and closes within seconds', async () => {
  // A slow trickle: the byte bound is never reached, the time bound is.
  const started = Date.now();
  const { head } = await exchange(t.url, 'POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' + `1a000\r\n${'x'.repeat(0x1a000)}\r\n`, 0);
  expect(head).toMatch(/^HTTP\/1\.1 413 /);
  expect(Date.now() - started).toBeLessThan(LINGER_MS + 5_000);
});
