import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SpanSink {
  /** An OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Spans received so far. */
  spans(): number;
  close(): Promise<void>;
}

/** How a traced contender samples: every request, one in ten (parent-based), or none (tracing on, every request left out). */
export type Sampling = 'every' | '1in10' | 'always_off';
const SAMPLERS: Record<Sampling, Record<string, string>> = {
  every: {},
  '1in10': { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  always_off: { OTEL_TRACES_SAMPLER: 'always_off' },
};

/** `env` with tracing on, exporting to `sink`, sampled as `sampling` says. */
export function tracedEnv(env: Record<string, string>, sink: SpanSink, sampling: Sampling = 'every'): Record<string, string> {
  return { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'petstore-bench', ...SAMPLERS[sampling] };
}

/**
 * Where the traced contenders export (OTLP/HTTP, protobuf as the SDK sends by default, or JSON):
 * in the bench's own process, so its CPU is not the gateway's. It counts the spans it is sent and
 * keeps nothing.
 */
export async function startSpanSink(): Promise<SpanSink> {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = req.headers['content-type']?.startsWith('application/json');
      spans += json ? jsonSpans(body) : protobufSpans(body);
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function jsonSpans(body: Buffer): number {
  const request = JSON.parse(body.toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
  let count = 0;
  for (const resource of request.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) count += scope.spans?.length ?? 0;
  return count;
}

/**
 * The spans of an ExportTraceServiceRequest: field 1 (resource_spans) of the request, field 2
 * (scope_spans) of each, field 2 (spans) of each of those, all length-delimited.
 */
function protobufSpans(body: Buffer): number {
  let count = 0;
  for (const resource of fields(body, 1)) for (const scope of fields(resource, 2)) count += fields(scope, 2).length;
  return count;
}

/** The length-delimited values of field `wanted` in one protobuf message. */
function fields(message: Buffer, wanted: number): Buffer[] {
  const found: Buffer[] = [];
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = message[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < message.length) {
    const key = varint();
    const wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const length = varint();
      if (key >>> 3 === wanted) found.push(message.subarray(at, at + length));
      at += length;
    } else throw new Error(`protobuf wire type ${wire} in an OTLP request`);
  }
  return found;
}
