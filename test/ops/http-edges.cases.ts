import { request as httpRequest, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import request from 'supertest';
import { MAX_BODY_BYTES } from '../../src/common/bounds';
import { createHttpServer } from '../../src/http/http-server';
import { LINGER_BYTES, LINGER_MS } from '../../src/http/lingering-close';
import { startTestApp, type TestApp } from '../helpers/app';
import { exchange } from '../helpers/raw-http';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** A final (non-1xx) answer has come with all of its Content-Length. */
function wholeFinalAnswer(text: string): boolean {
  const final = /HTTP\/1\.1 [2-5]\d\d [^]*?\r\n\r\n/.exec(text);
  const length = final && /^Content-Length: (\d+)$/im.exec(final[0]);
  return !!length && text.length - (final.index + final[0].length) >= Number(length[1]);
}

describe('requests Node would answer with an empty body', () => {
  it('refuses an HTTP/1.1 request without Host with the Error object and rate-limit headers', async () => {
    const { head, body } = await exchange(t.url, 'GET /openapi.json HTTP/1.1\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/^X-RateLimit-Remaining: \d+$/im);
    expect(head).toMatch(/^RateLimit-Policy: /im);
    expect(JSON.parse(body)).toEqual({ code: 'BAD_REQUEST', message: 'An HTTP/1.1 request needs a Host header', status: 400 });
  });

  it('refuses an expectation other than 100-continue with the Error object and rate-limit headers', async () => {
    const { head, body } = await exchange(t.url, 'GET /openapi.json HTTP/1.1\r\nHost: localhost\r\nExpect: 999-foo\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/^X-RateLimit-Limit: 60$/im);
    expect(JSON.parse(body)).toEqual({ code: 'BAD_REQUEST', message: 'Expect: only 100-continue is supported, got "999-foo"', status: 400 });
  });

  it('still serves HTTP/1.0 without Host and Expect: 100-continue', async () => {
    const old = await exchange(t.url, 'GET /openapi.json HTTP/1.0\r\n\r\n', 0);
    expect(old.head).toMatch(/^HTTP\/1\.1 200 /);
    const body = JSON.stringify({ query: '{ pets(first: 1) { totalCount } }' });
    // The connection stays open for the next request: the client ends it once the 200 is whole.
    const continued = await exchange(
      t.url,
      `POST /graphql HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      5_000,
      wholeFinalAnswer,
    );
    expect(continued.head).toBe('HTTP/1.1 100 Continue');
    expect(continued.body).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('CONNECT', () => {
  it('is answered 405 with the Error object, not dropped without a word', async () => {
    const { head, body } = await exchange(t.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 0);
    expect(head).toMatch(/^HTTP\/1\.1 405 /);
    expect(head).toMatch(/^Allow: GET, HEAD, POST, OPTIONS$/im);
    expect(JSON.parse(body)).toEqual({ code: 'METHOD_NOT_ALLOWED', message: 'CONNECT is not supported: this server is not a proxy', status: 405 });
  });
});

/**
 * Sends a chunked body of `chunk`s, each as soon as the last is taken, until the server closes the
 * connection or `cap` bytes are sent (then the body ends); resolves with the answer and the bytes sent.
 */
function endlessBody(url: string, cap: number): Promise<{ head: string; body: string; sent: number }> {
  const chunk = `4000\r\n${'x'.repeat(0x4000)}\r\n`;
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    let text = '';
    let sent = 0;
    let closed = false;
    socket.on('data', (data) => (text += data.toString('latin1')));
    // A write into the closed connection fails with EPIPE or ECONNRESET: that is the close itself.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      const split = text.indexOf('\r\n\r\n');
      resolve({ head: text.slice(0, split), body: text.slice(split + 4), sent });
    });
    const pump = () => {
      while (!closed && sent < cap) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      if (!closed) socket.end('0\r\n\r\n');
    };
    socket.write('POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n', pump);
  });
}

describe('bodies past the limit', () => {
  it('answers a chunked body 413 as soon as it passes the limit, and closes after reading on a bounded number of bytes', async () => {
    const cap = 10 * LINGER_BYTES;
    const started = Date.now();
    const { head, body, sent } = await endlessBody(t.url, cap);
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head).toMatch(/^Connection: close$/im);
    expect(JSON.parse(body).errors[0].extensions).toEqual({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    // What the gateway reads on, and what the kernel buffers on both sides, not the whole body.
    expect(sent).toBeLessThan(cap);
    expect(Date.now() - started).toBeLessThan(LINGER_MS + 5_000);
  });

  it('gets its 413 read by a client sending 1 MB with a Content-Length, ten times in a row', async () => {
    const body = Buffer.alloc(1_000_000, 'x');
    const answers = [];
    for (let n = 0; n < 10; n += 1) {
      answers.push(
        await new Promise<{ status?: number; code?: string }>((resolve, reject) => {
          const sent = httpRequest(`${t.url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': body.length } }, (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode, code: JSON.parse(text).errors[0].extensions.code }));
          });
          sent.on('error', reject);
          sent.end(body);
        }),
      );
    }
    expect(answers).toEqual(Array.from({ length: 10 }, () => ({ status: 413, code: 'PAYLOAD_TOO_LARGE' })));
  });

  it('gets its 413 read by a client that reads only once it has sent a body larger than the socket buffers', async () => {
    const length = 8 * 1024 * 1024;
    const { head } = await new Promise<{ head: string }>((resolve, reject) => {
      const socket = connect(Number(new URL(t.url).port), '127.0.0.1');
      let text = '';
      socket.pause();
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve({ head: text.slice(0, text.indexOf('\r\n')) }));
      socket.write(`POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
      // Read only once the whole body is taken, as a client that sends first and reads after does.
      socket.write(Buffer.alloc(length, 'x'), () => socket.resume());
    });
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('answers Expect: 100-continue with a Content-Length past the limit 413, not 100 Continue', async () => {
    const { head, body } = await exchange(
      t.url,
      `POST /graphql HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${2 * MAX_BODY_BYTES}\r\n\r\n`,
      0,
    );
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head).toMatch(/^Connection: close$/im);
    expect(head).toMatch(/^X-RateLimit-Remaining: \d+$/im);
    expect(JSON.parse(body).errors[0].extensions).toEqual({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
  });
});

describe('methods', () => {
  it.each([
    ['POST', '/healthz'],
    ['PUT', '/readyz'],
    ['DELETE', '/metrics'],
    ['PATCH', '/healthz'],
  ])('answers %s %s with 405 and Allow: GET, HEAD', async (method, path) => {
    const response = await request(t.url)[method.toLowerCase() as 'post'](path);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.body).toMatchObject({ code: 'METHOD_NOT_ALLOWED', status: 405 });
  });

  it('serves HEAD on /healthz, /readyz and /metrics like GET, without a body', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const response = await request(t.url).head(path);
      expect(response.status).toBe(200);
      expect(response.text).toBeUndefined();
    }
  });

  it('refuses HEAD on /graphql with 405 and Allow: GET, POST: it would run the query and throw the answer away', async () => {
    const response = await request(t.url).head('/graphql?query=%7B__typename%7D');
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, POST');
    expect(response.headers).toHaveProperty('x-ratelimit-remaining');
  });
});

describe('slow clients', () => {
  // The gateway's bounds scaled down, checked as often relative to them: the cuts are the same,
  // reached in a fraction of a second rather than the seconds of the real ones.
  const HEADERS_TIMEOUT_MS = 300;
  const REQUEST_TIMEOUT_MS = 600;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createHttpServer(t.app.listener, { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS, checkEveryMs: 50, lingerMs: 200 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  // The client never finishes: the exchange ends only because the server cuts it (no earlier than its timeout).
  it('cuts headers that take longer than the headers timeout', async () => {
    const { head, closedAfterMs } = await exchange(url, 'GET /openapi.json HTTP/1.1\r\nHost: localhost\r\n', 0);
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
  });

  it('ends a socket it gave up on fully, though the client keeps its side open (no FIN_WAIT_2 held)', async () => {
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    // A client that keeps its side open after the server's FIN, as the ones that held FIN_WAIT_2 did.
    const client = connect({ port: Number(new URL(url).port), host: '127.0.0.1', allowHalfOpen: true });
    client.on('error', () => undefined);
    const answered = new Promise<string>((resolve) => {
      let text = '';
      client.on('data', (chunk) => (text += chunk.toString('latin1')));
      client.once('end', () => resolve(text));
    });
    client.write('GET /openapi.json HTTP/1.1\r\nHost: localhost\r\n');
    const serverSide = await accepted;
    expect(await answered).toMatch(/^HTTP\/1\.1 400 /);
    await new Promise<void>((resolve) => (serverSide.destroyed ? resolve() : serverSide.once('close', () => resolve())));
    expect(client.destroyed).toBe(false);
    client.destroy();
  });

  it('cuts a body that takes longer than the request timeout', async () => {
    const { head, closedAfterMs } = await exchange(
      url,
      'POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":',
      0,
    );
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
  });
});

// Node emits a failed accept (EMFILE: out of file descriptors) as 'error' on the listening server.
it('goes on serving after the listening server fails to accept a connection', async () => {
  t.server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' }));
  expect((await request(t.url).get('/healthz')).status).toBe(200);
});
