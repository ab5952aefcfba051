import { type IncomingMessage, request, type Server, type ServerResponse, createServer, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A round-robin HTTP load balancer for the soak, as HAProxy with `retry-on conn-failure
 * empty-response` would be: a request whose instance refused the connection or closed it
 * without answering (a killed instance) goes to the next one. Bodies are buffered for that, and
 * retrying is safe for the soak's load: reads, and orders carrying an idempotency key.
 */
export interface LoadBalancer {
  url: string;
  /** Requests sent again to another instance after one failed without answering. */
  retried: number;
  close(): Promise<void>;
}

export async function loadBalancer(upstreams: () => number[]): Promise<LoadBalancer> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let next = 0;
  const stats = { retried: 0 };

  const forward = (port: number, req: IncomingMessage, body: Buffer, res: ServerResponse) =>
    new Promise<boolean>((resolve) => {
      const upstream = request(
        { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent, timeout: 15_000 },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('end', () => resolve(true));
          answer.on('error', () => resolve(true));
        },
      );
      upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
      upstream.on('error', () => resolve(res.headersSent));
      upstream.end(body);
    });

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const ports = upstreams();
      for (let attempt = 0; attempt < ports.length * 2; attempt += 1) {
        const port = ports[next++ % ports.length];
        if (await forward(port, req, body, res)) return;
        stats.retried += 1;
      }
      res.writeHead(503, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ code: 'SERVICE_UNAVAILABLE', message: 'No instance answered' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get retried() {
      return stats.retried;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
