import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SpanSink {
  /** An OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Spans received so far. */
  spans(): number;
  close(): Promise<void>;
}

/**
 * Where the traced contender exports (OTLP/HTTP, JSON): in the bench's own process, so its CPU is
 * not the gateway's. It counts the spans it is sent and keeps nothing.
 */
export async function startSpanSink(): Promise<SpanSink> {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
      for (const resource of body.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
