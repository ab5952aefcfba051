import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as it arrived, its attributes decoded from OTLP/JSON's typed values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Undefined for a trace's root. */
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** The instrumentation scope that made it (`@opentelemetry/instrumentation-pg`, …). */
  scope: string;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  /** The resource's attributes: service.name, … */
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port>: an OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

/**
 * A real OTLP/HTTP receiver: accepts POST /v1/traces with JSON bodies (OTEL_EXPORTER_OTLP_PROTOCOL
 * http/json) as a collector does, and keeps every span it decodes. Anything else is a 404 or 415.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
    if (!req.headers['content-type']?.startsWith('application/json')) return void res.writeHead(415).end();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = decode(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              scope: scopeSpans.scope?.name,
              attributes: decode(span.attributes),
              status: span.status ?? {},
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** OTLP/JSON attributes ({ key, value: { stringValue | intValue | … } }) as a plain object. */
function decode(attributes: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (attributes ?? []).map(({ key, value }) => {
      const [type, raw] = Object.entries(value)[0] ?? [];
      return [key, type === 'intValue' ? Number(raw) : raw];
    }),
  );
}
