import type { IncomingMessage } from 'node:http';
import { requestAttributes } from '../../src/telemetry/server-span';

/**
 * The HTTP server span's request attributes (src/telemetry/server-span.ts), by OpenTelemetry's
 * HTTP conventions: the parts a request over the test gateway (tracing.slow.cases.ts) does not reach.
 */
function request(url: string, headers: Record<string, string> = {}, method = 'GET'): IncomingMessage {
  return { method, url, headers, httpVersion: '1.1', socket: { remoteAddress: '10.0.0.9', remotePort: 51000 } } as unknown as IncomingMessage;
}

describe('the HTTP server span attributes', () => {
  it('splits the path from the query, and redacts a GET’s variables only', () => {
    expect(requestAttributes(request('/graphql'))).toMatchObject({ 'url.path': '/graphql' });
    expect(requestAttributes(request('/graphql'))['url.query']).toBeUndefined();
    expect(requestAttributes(request('/graphql?'))['url.query']).toBeUndefined();
    expect(requestAttributes(request('/graphql?query=%7Bpets%7D&variables=%7B%22name%22%3A%22Rex%22%7D'))['url.query']).toBe('query=%7Bpets%7D&variables=REDACTED');
    expect(requestAttributes(request('/pets?page=2'))['url.query']).toBe('page=2');
  });

  it('names the method as the conventions do: known methods upper-cased, any other _OTHER with the one sent', () => {
    expect(requestAttributes(request('/', {}, 'post'))).toMatchObject({ 'http.request.method': 'POST', 'http.request.method_original': 'post' });
    expect(requestAttributes(request('/', {}, 'BREW'))).toMatchObject({ 'http.request.method': '_OTHER', 'http.request.method_original': 'BREW' });
    expect(requestAttributes(request('/', {}, 'GET'))['http.request.method_original']).toBeUndefined();
  });

  it('takes the server from Host, or from what a proxy forwarded', () => {
    expect(requestAttributes(request('/', { host: 'pets.example:8080' }))).toMatchObject({ 'server.address': 'pets.example', 'server.port': 8080 });
    expect(requestAttributes(request('/', { host: '[::1]:4000' }))).toMatchObject({ 'server.address': '::1', 'server.port': 4000 });
    const bare = requestAttributes(request('/', { host: 'pets.example' }));
    expect(bare['server.address']).toBe('pets.example');
    expect(bare['server.port']).toBeUndefined();
    expect(requestAttributes(request('/', { host: 'internal:4000', 'x-forwarded-host': 'pets.example' }))['server.address']).toBe('pets.example');
    expect(requestAttributes(request('/', { host: 'internal:4000', forwarded: 'for=192.0.2.60;proto=https;host="pets.example:443"' }))).toMatchObject({ 'server.address': 'pets.example', 'server.port': 443 });
  });

  it('takes the client from Forwarded, else X-Forwarded-For, else the peer, which stays the peer', () => {
    expect(requestAttributes(request('/'))).toMatchObject({ 'client.address': '10.0.0.9', 'network.peer.address': '10.0.0.9', 'network.peer.port': 51000 });
    expect(requestAttributes(request('/', { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' }))).toMatchObject({ 'client.address': '203.0.113.7', 'network.peer.address': '10.0.0.9' });
    expect(requestAttributes(request('/', { forwarded: 'for="[2001:db8::1]:4711", for=10.0.0.1', 'x-forwarded-for': '203.0.113.7' }))['client.address']).toBe('2001:db8::1');
    expect(requestAttributes(request('/', { forwarded: 'For=198.51.100.17:1234' }))['client.address']).toBe('198.51.100.17');
  });
});
