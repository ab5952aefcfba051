import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { waitFor } from '../helpers/wait';
import { INTERNAL, PG, QUERY, SERVER, useTracedGateways } from './traced-gateway';

/**
 * Tracing's samplers, and a gateway with no OTEL_* variable: a gateway process each
 * (traced-gateway.ts), so they run in `npm run test:slow`.
 */
const gateways = useTracedGateways();
const { graphql, startGateway, traceOf } = gateways;

describe('with a sampler that leaves requests out (OTEL_TRACES_SAMPLER)', () => {
  const traced = (env: NodeJS.ProcessEnv) =>
    startGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: gateways.receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20', ...env });

  it('records a sampled request whole and an unsampled one not at all: no span of any kind, no trace id in its log line', async () => {
    const gateway = await traced({ OTEL_SERVICE_NAME: 'petstore-ratio', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    try {
      const sent = [];
      for (let i = 0; i < 24; i += 1) sent.push(await graphql(gateway, QUERY));
      const sampled = sent.filter((request) => request.traceId !== undefined);
      // Each request is a coin toss: all 24 landing on one side is a chance of one in eight million.
      expect(sampled.length).toBeGreaterThan(0);
      expect(sampled.length).toBeLessThan(sent.length);
      for (const { traceId } of sampled) {
        const spans = await traceOf(traceId!);
        expect(spans.filter((span) => !span.parentSpanId).map(({ kind, name }) => ({ kind, name }))).toEqual([{ kind: SERVER, name: 'POST /graphql' }]);
        expect(spans.find((span) => span.kind === INTERNAL)?.name).toBe('query TracedPet');
        expect(spans.some((span) => span.scope === PG)).toBe(true);
      }
      for (const { line } of sent.filter((request) => request.traceId === undefined)) expect(line.spanId).toBeUndefined();
      // The last sampled trace has arrived whole: every span this gateway sent belongs to a sampled request.
      const ours = new Set(sampled.map((request) => request.traceId));
      const sentByIt = gateways.receiver.spans.filter((span) => span.resource['service.name'] === 'petstore-ratio');
      expect(sentByIt.filter((span) => !ours.has(span.traceId))).toEqual([]);
    } finally {
      await gateway.stop();
    }
  });

  it("follows the caller's decision under a parent-based sampler: traceparent's flags say whether a request is recorded", async () => {
    const gateway = await traced({ OTEL_SERVICE_NAME: 'petstore-parent', OTEL_TRACES_SAMPLER: 'parentbased_always_off' });
    try {
      const recorded = randomBytes(16).toString('hex');
      const declined = randomBytes(16).toString('hex');
      const parent = randomBytes(8).toString('hex');
      const own = await graphql(gateway, QUERY);
      const yes = await graphql(gateway, QUERY, { traceparent: `00-${recorded}-${parent}-01` });
      const no = await graphql(gateway, QUERY, { traceparent: `00-${declined}-${parent}-00` });
      expect(own.traceId).toBeUndefined();
      expect(yes.traceId).toBe(recorded);
      expect(no.traceId).toBeUndefined();
      await traceOf(recorded);
      const sentByIt = gateways.receiver.spans.filter((span) => span.resource['service.name'] === 'petstore-parent');
      expect(new Set(sentByIt.map((span) => span.traceId))).toEqual(new Set([recorded]));
    } finally {
      await gateway.stop();
    }
  });

  it('makes no span at all for a request or a subscribe over WebSocket the sampler leaves out (always_off): no HTTP, operation, SQL or Redis span', async () => {
    const gateway = await traced({ OTEL_SERVICE_NAME: 'petstore-unsampled', OTEL_TRACES_SAMPLER: 'always_off' });
    const client = createClient({ url: `${gateway.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, onNonLazyError: () => undefined });
    try {
      for (let i = 0; i < 3; i += 1) {
        const { body, traceId, line } = await graphql(gateway, QUERY);
        expect(body.errors).toBeUndefined();
        expect(traceId).toBeUndefined();
        expect(line.spanId).toBeUndefined();
      }
      let subscribed = false;
      client.subscribe({ query: 'subscription UntracedStock { inventoryChanged(petIds: ["1"]) { quantity } }' }, { next: () => {}, error: () => {}, complete: () => {} });
      // The subscription counts as active once its subscribe has run.
      await waitFor(async () => (subscribed = /petstore_live_subscriptions\{[^}]*\} [1-9]/.test(await (await fetch(`${gateway.url}/metrics`)).text())), 10_000, 'the subscription');
      expect(subscribed).toBe(true);
    } finally {
      await client.dispose();
      await gateway.stop();
    }
    // Spans end before the process does, and the SDK sends what it holds on SIGTERM.
    expect(gateways.receiver.spans.filter((span) => span.resource['service.name'] === 'petstore-unsampled')).toEqual([]);
  });
});

describe('with no OTEL_* variable set', () => {
  it('loads no tracing code, and its request log carries no trace id', async () => {
    // Lists, as the process exits, every module it loaded.
    const probe = join(gateways.dataDirs, 'loaded-modules.js');
    writeFileSync(probe, "process.on('exit', () => process.stderr.write('\\nLOADED ' + JSON.stringify(Object.keys(require.cache)) + '\\n'));\n");
    const gateway = await startGateway({ NODE_OPTIONS: `--require ${probe}` });
    let stderr = '';
    try {
      const { body, traceId, line } = await graphql(gateway, QUERY);
      expect(body.errors).toBeUndefined();
      expect(traceId).toBeUndefined();
      expect(line.spanId).toBeUndefined();
    } finally {
      stderr = await gateway.stop();
    }
    const loaded: string[] = JSON.parse(/^LOADED (.*)$/m.exec(stderr)![1]);
    expect(loaded.some((path) => path.endsWith(`${sep}src${sep}gateway.js`))).toBe(true);
    // prom-client requires the API package (a no-op without an SDK) for its process metrics.
    expect(loaded.filter((path) => /[\\/]@opentelemetry[\\/]/.test(path) && !/[\\/]@opentelemetry[\\/]api[\\/]/.test(path))).toEqual([]);
    expect(loaded.filter((path) => path.includes(`${sep}telemetry${sep}`)).map((path) => path.split(sep).pop()).sort()).toEqual(['index.js', 'start.js']);
  });
});
